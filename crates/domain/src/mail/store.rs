//! The mail outbox table (`mail_outbox`): queueing inside the caller's transaction,
//! claiming with leases, and recording each hand-over's outcome.
//!
//! A mail is `queued` until the SMTP server accepts it (`sent`) or refuses it for good, or
//! its retries run out (`failed`). A worker claims due mails by writing a lease
//! (`lease_owner`, `lease_until`); on PostgreSQL the claim skips rows another claimer has
//! locked, and a live lease keeps every other worker away, so one mail is handed over by one
//! worker at a time. An expired lease (a crashed node) makes the mail claimable again.

use serde_json::{Map, Value};
use sqlx::types::Json;
use uuid::Uuid;

use super::message::{self, Message};
use crate::{
    OrgId,
    db::{Backend, Db, DbResult, Ts, Tx, TxConn},
    dispatch, dispatch_tx,
};

/// Where a mail stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Queued,
    Sent,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Sent => "sent",
            Status::Failed => "failed",
        }
    }
}

impl TryFrom<String> for Status {
    type Error = String;

    fn try_from(s: String) -> Result<Status, String> {
        match s.as_str() {
            "queued" => Ok(Status::Queued),
            "sent" => Ok(Status::Sent),
            "failed" => Ok(Status::Failed),
            _ => Err(format!("unknown mail status {s:?}")),
        }
    }
}

/// A mail as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Mail {
    pub id: Uuid,
    pub org_id: OrgId,
    pub kind: String,
    pub to_address: String,
    pub subject: String,
    pub text_body: String,
    pub html_body: Option<String>,
    pub headers: Json<Map<String, Value>>,
    pub message_id: String,
    #[sqlx(try_from = "String")]
    pub status: Status,
    /// Hand-overs tried so far (the successful one included).
    pub attempts: i64,
    /// When the next hand-over is due; null unless queued.
    pub next_attempt_at: Option<Ts>,
    pub last_error: Option<String>,
    pub created_at: Ts,
    pub sent_at: Option<Ts>,
}

impl Mail {
    /// The extra headers (PostgreSQL does not keep their order).
    pub fn header_pairs(&self) -> Vec<(String, String)> {
        self.headers
            .0
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect()
    }
}

const COLS: &str = "id, org_id, kind, to_address, subject, text_body, html_body, headers, message_id, status, attempts, next_attempt_at, last_error, created_at, sent_at";

/// The PostgreSQL notification channel of newly queued mail.
pub const MAIL_CHANNEL: &str = "jobboard_mail";

/// Woken when mail is queued in this process.
pub static MAIL_WAKE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Why a mail could not be queued.
#[derive(Debug, thiserror::Error)]
pub enum EnqueueError {
    /// A field of the message is unusable (the message names it).
    #[error("invalid mail: {0}")]
    Invalid(String),
    #[error(transparent)]
    Db(#[from] crate::db::StoreError),
}

impl From<sqlx::Error> for EnqueueError {
    fn from(e: sqlx::Error) -> Self {
        EnqueueError::Db(e.into())
    }
}

/// Queues `msg` for the organization inside `tx`, due at once: the mail exists exactly
/// when the change that caused it is committed. Returns the mail's id.
pub async fn enqueue(tx: &mut Tx, org_id: OrgId, msg: &Message) -> Result<Uuid, EnqueueError> {
    msg.validate().map_err(EnqueueError::Invalid)?;
    let id = Uuid::now_v7();
    let now = tx.now();
    let headers: Map<String, Value> = msg
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    dispatch_tx!(tx, t => {
        sqlx::query(
            "INSERT INTO mail_outbox (id, org_id, kind, to_address, subject, text_body, html_body, headers, message_id, status, attempts, next_attempt_at, created_at, to_identity)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'queued', 0, $10, $10, $11)",
        )
        .bind(id)
        .bind(org_id)
        .bind(&msg.kind)
        .bind(msg.to.trim())
        .bind(&msg.subject)
        .bind(&msg.text)
        .bind(msg.html.as_deref())
        .bind(Json(&headers))
        .bind(message::message_id(id))
        .bind(now)
        .bind(msg.recipient_identity())
        .execute(&mut **t)
        .await?;
    });
    // Wake the mail workers: on PostgreSQL every node's listener, once this commits; in
    // this process at once (on SQLite the worker's claim then waits for the write lock,
    // so it reads the mail after the commit).
    tx.notify_after_commit(MAIL_CHANNEL);
    MAIL_WAKE.notify_waiters();
    Ok(id)
}

/// Mails anyone can ask the service to send to an address they type (an alert's
/// confirmation, a dashboard password reset): capped per recipient and day, whatever the
/// form, organization or node.
pub const ON_REQUEST_KINDS: &[&str] = &["alert_confirm", "password_reset"];
/// Most mails of [`ON_REQUEST_KINDS`] one recipient gets in 24 hours.
pub const ON_REQUEST_DAILY_CAP: i64 = 10;

/// True when the recipient of `identity` may get another mail of [`ON_REQUEST_KINDS`]
/// now (fewer than [`ON_REQUEST_DAILY_CAP`] in the last 24 hours). On PostgreSQL the
/// transaction first takes a lock of that recipient, so concurrent requests on any node
/// are counted one after the other; on SQLite writing transactions already are.
pub async fn on_request_allowed(tx: &mut Tx, identity: &str, now: Ts) -> DbResult<bool> {
    let since = now.earlier_by(std::time::Duration::from_secs(86_400));
    let kinds: Vec<String> = ON_REQUEST_KINDS.iter().map(|k| k.to_string()).collect();
    let n: i64 = match &mut tx.conn {
        TxConn::Postgres(t, _) => {
            sqlx::query("SELECT pg_advisory_xact_lock(hashtext('mail-recipient:' || $1))")
                .bind(identity)
                .execute(&mut **t)
                .await?;
            sqlx::query_scalar(
                "SELECT COUNT(*) FROM mail_outbox WHERE to_identity = $1 AND created_at > $2 AND kind = ANY($3)",
            )
            .bind(identity)
            .bind(since)
            .bind(&kinds)
            .fetch_one(&mut **t)
            .await?
        }
        TxConn::Sqlite(t) => {
            let marks = (0..kinds.len())
                .map(|i| format!("${}", i + 3))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "SELECT COUNT(*) FROM mail_outbox WHERE to_identity = $1 AND created_at > $2 AND kind IN ({marks})"
            );
            let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(identity)
                .bind(since);
            for k in &kinds {
                q = q.bind(k.clone());
            }
            q.fetch_one(&mut **t).await?
        }
    };
    Ok(n < ON_REQUEST_DAILY_CAP)
}

/// One mail of the organization (`None` for another organization's).
pub async fn get(db: &Db, org_id: OrgId, id: Uuid) -> DbResult<Option<Mail>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {COLS} FROM mail_outbox WHERE org_id = $1 AND id = $2"
        )))
        .bind(org_id)
        .bind(id)
        .fetch_optional(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

/// The organization's newest mails, newest first.
pub async fn list(db: &Db, org_id: OrgId, limit: i64) -> DbResult<Vec<Mail>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {COLS} FROM mail_outbox WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
        )))
        .bind(org_id)
        .bind(limit)
        .fetch_all(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

/// Claims up to `limit` queued mails due at `now` for `owner` until `lease_until`. On
/// PostgreSQL rows locked by another claimer are skipped, so two workers never claim the
/// same mail; on SQLite the single writer serialises claims.
pub async fn claim(
    db: &Db,
    owner: Uuid,
    now: Ts,
    lease_until: Ts,
    limit: i64,
) -> DbResult<Vec<Mail>> {
    let lock = match db.backend() {
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "UPDATE mail_outbox SET lease_owner = $1, lease_until = $3
         WHERE id IN (
             SELECT id FROM mail_outbox
             WHERE status = 'queued' AND next_attempt_at <= $2
               AND (lease_until IS NULL OR lease_until <= $2)
             ORDER BY next_attempt_at, id
             LIMIT $4{lock})
         RETURNING {COLS}"
    );
    dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(owner)
            .bind(now)
            .bind(lease_until)
            .bind(limit)
            .fetch_all(p)
            .await.map_err(crate::db::StoreError::from)
    })
}

/// Records that the SMTP server accepted the mail. Whatever the lease says: an accepted
/// mail is sent, and must not be offered again. `false` when it was no longer queued.
pub async fn mark_sent(db: &Db, id: Uuid, at: Ts) -> DbResult<bool> {
    dispatch!(db.writer(), p => {
        Ok(sqlx::query(
            "UPDATE mail_outbox SET status = 'sent', sent_at = $2, attempts = attempts + 1, next_attempt_at = NULL,
                 last_error = NULL, lease_owner = NULL, lease_until = NULL
             WHERE id = $1 AND status = 'queued'",
        )
        .bind(id)
        .bind(at)
        .execute(p)
        .await?
        .rows_affected() > 0)
    })
}

/// Records a failed hand-over of a mail leased by `owner`: queued again for `retry_at`,
/// or failed for good when `None`. `false` when the lease was lost (nothing recorded).
pub async fn record_failure(
    db: &Db,
    owner: Uuid,
    id: Uuid,
    error: &str,
    retry_at: Option<Ts>,
) -> DbResult<bool> {
    let status = match retry_at {
        Some(_) => Status::Queued,
        None => Status::Failed,
    };
    dispatch!(db.writer(), p => {
        Ok(sqlx::query(
            "UPDATE mail_outbox SET status = $3, attempts = attempts + 1, next_attempt_at = $4, last_error = $5,
                 lease_owner = NULL, lease_until = NULL
             WHERE id = $1 AND lease_owner = $2 AND status = 'queued'",
        )
        .bind(id)
        .bind(owner)
        .bind(status.as_str())
        .bind(retry_at)
        .bind(error)
        .execute(p)
        .await?
        .rows_affected() > 0)
    })
}

/// The mail outbox, as the shared outbox statements name it.
const OUTBOX: crate::db::outbox::Table = crate::db::outbox::Table {
    name: "mail_outbox",
    waiting: "queued",
};

/// Hands the leases of `owner` on these mails back (unfinished at shutdown).
pub async fn release(db: &Db, owner: Uuid, ids: &[Uuid]) -> DbResult<()> {
    crate::db::outbox::release(db, OUTBOX, owner, ids).await
}

/// Mails waiting for a hand-over, and mails failed for good (the queue depth). Each count
/// reads its own partial index.
pub async fn counts(db: &Db) -> DbResult<(i64, i64)> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM mail_outbox WHERE status = 'queued'),
                    (SELECT COUNT(*) FROM mail_outbox WHERE status = 'failed')",
        )
        .fetch_one(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

/// When the earliest queued mail is due, if any.
pub async fn next_due(db: &Db) -> DbResult<Option<Ts>> {
    crate::db::outbox::next_due(db, OUTBOX).await
}
