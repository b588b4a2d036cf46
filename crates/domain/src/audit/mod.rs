//! The audit log of staff actions: who (the staff user and their address at the time),
//! did what (`signed_in`, `job.status_changed`, `key.created`, ...), to which record,
//! when and from which client address. The dashboard records an entry for each of its
//! state-changing forms that succeeded and each sign-in (see `web::dashboard::audit`);
//! the API reads them (`GET /api/audit`, scope `admin`) and so does the dashboard
//! (`/dashboard/settings/audit`). Entries older than `audit_keep_days` are deleted by
//! the scheduler.

mod store;

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    OrgId, Result, Ts, UserId,
    db::Db,
    query,
    query::{QInt, QText},
};

/// One staff action as recorded.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct AuditEntry {
    pub id: Uuid,
    /// When it happened.
    pub at: Ts,
    /// The staff user who acted (their id stays here after they are removed).
    #[schema(value_type = Option<Uuid>)]
    pub actor_user_id: Option<UserId>,
    /// Their email address at the time.
    pub actor_email: String,
    /// What they did: `signed_in`, `signed_out`, `job.created`, `job.updated`,
    /// `job.status_changed`, `job.deleted`, `application.status_changed`,
    /// `collection.created`, `collection.updated`, `entry.created`, `entry.updated`,
    /// `entry.status_changed`, `entry.deleted`, `webhook.created`, `webhook.enabled_changed`,
    /// `webhook.tested`, `webhook.deleted`, `delivery.retried`, `key.created`,
    /// `key.revoked`, `settings.board_changed`, `staff.added`, `staff.removed`,
    /// `password.changed`, or `dashboard.action` with the address in `target` for a form
    /// not named here.
    pub action: String,
    /// The record acted on (a job's id, a collection's slug, ...), when there is one.
    pub target: Option<String>,
    /// What changed, where the action says more than its name (`status=active`).
    pub detail: Option<String>,
    /// The client's address (honouring `trusted_proxies`).
    pub ip: Option<String>,
    #[serde(skip)]
    #[schema(ignore)]
    pub org_id: OrgId,
}

/// An entry to record.
#[derive(Debug, Clone)]
pub struct NewEntry {
    pub org_id: OrgId,
    pub actor_user_id: Option<UserId>,
    pub actor_email: String,
    pub action: String,
    pub target: Option<String>,
    pub detail: Option<String>,
    pub ip: Option<String>,
}

query! {
    /// Query of `GET /audit`.
    pub struct AuditQuery {
        /// Only entries of this action (`signed_in`, `job.status_changed`, ...).
        pub action: QText<100> = optional,
        /// Only entries of the staff user with this email address (compared ignoring
        /// the case of ASCII letters).
        pub actor: QText<254> = optional,
        /// Page number, from 1.
        pub page: QInt<1, 1_000_000> = default(1),
        /// Entries per page, 1 to 100.
        pub per_page: QInt<1, 100> = default(50),
    }
}

/// A page of entries, newest first, and how many the query matches.
#[derive(Debug, Clone)]
pub struct AuditPage {
    pub rows: Vec<AuditEntry>,
    pub total: i64,
}

/// Records one action at `now`.
pub async fn record(db: &Db, e: &NewEntry, now: Ts) -> Result<()> {
    Ok(store::insert(db, Uuid::now_v7(), e, now).await?)
}

/// A page of the organization's entries, newest first.
pub async fn list(db: &Db, org_id: OrgId, q: &AuditQuery) -> Result<AuditPage> {
    let (rows, total) = store::list(db, org_id, q).await?;
    Ok(AuditPage { rows, total })
}

/// Deletes the entries recorded before `before`, a thousand per transaction; how many.
pub async fn prune(db: &Db, before: Ts) -> Result<u64> {
    let mut deleted = 0;
    loop {
        let n = store::delete_before(db, before, 1_000).await?;
        deleted += n;
        if n < 1_000 {
            return Ok(deleted);
        }
    }
}

/// The scheduler's step (hourly): deletes entries older than `keep_days` (0: none); how
/// many.
pub async fn prune_due(db: &Db, now: Ts, keep_days: u32) -> Result<u64> {
    if keep_days == 0 {
        return Ok(0);
    }
    let keep = std::time::Duration::from_secs(u64::from(keep_days) * 86_400);
    prune(db, now.earlier_by(keep)).await
}
