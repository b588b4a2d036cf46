//! Members of a job board and `members/sync`: the member, its access record and a payment,
//! written with their events in one transaction.

use serde::Serialize;
use serde_json::{Value, json};
use sqlx::types::Json;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{
    Db, DbResult, Ts, Tx,
    access::{self, Access, AccessSync},
    billing::{ApprovalStatus, Role},
    events,
    payments::{self, Payment, PaymentSync},
    plans,
};
use crate::dispatch_tx;

const COLUMNS: &str = "id, org_id AS organization_id, email, name, role, approval_status, \
     profile_picture, description, custom_fields, created_at, updated_at";

/// A member as returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub id: Uuid,
    /// The organization that scopes the member.
    pub organization_id: i64,
    /// As last synced; matched case-insensitively.
    pub email: String,
    pub name: String,
    pub role: Role,
    pub approval_status: ApprovalStatus,
    pub profile_picture: Option<String>,
    pub description: Option<String>,
    /// Free-form extra profile answers.
    #[schema(value_type = Option<Object>)]
    pub custom_fields: Option<Json<Value>>,
    pub created_at: Ts,
    pub updated_at: Ts,
}

/// A validated sync request. `None` means "not sent" (keep the stored value);
/// `Some(None)` on a nullable field means "sent as null" (clear it).
#[derive(Debug, Clone, Default)]
pub struct MemberSync {
    pub email: String,
    pub user_id: Option<Uuid>,
    pub name: Option<String>,
    pub role: Option<Role>,
    pub approval_status: Option<ApprovalStatus>,
    pub profile_picture: Option<Option<String>>,
    pub description: Option<Option<String>>,
    pub custom_fields: Option<Option<Value>>,
    pub access: Option<AccessSync>,
    pub payment: Option<PaymentSync>,
}

/// What a sync did.
#[derive(Debug, Clone)]
pub struct SyncOutcome {
    pub member: Member,
    pub created: bool,
    pub access: Option<Access>,
    pub payment: Option<Payment>,
}

/// Why a sync was refused. Nothing of it was stored.
#[derive(Debug)]
pub enum SyncError {
    /// The request contradicts stored state (answered `409 conflict`).
    Conflict {
        message: String,
        field: &'static str,
    },
    /// A referenced record does not exist (answered `422` on `field`).
    Invalid {
        field: &'static str,
        code: &'static str,
        message: String,
    },
    Db(super::StoreError),
}

impl From<super::StoreError> for SyncError {
    fn from(e: super::StoreError) -> Self {
        SyncError::Db(e)
    }
}

impl From<sqlx::Error> for SyncError {
    fn from(e: sqlx::Error) -> Self {
        SyncError::Db(e.into())
    }
}

impl SyncError {
    pub fn conflict(field: &'static str, message: impl Into<String>) -> Self {
        SyncError::Conflict {
            message: message.into(),
            field,
        }
    }

    pub fn invalid(field: &'static str, code: &'static str, message: impl Into<String>) -> Self {
        SyncError::Invalid {
            field,
            code,
            message: message.into(),
        }
    }
}

/// Creates or updates a member (and its access record and payment, when sent) in one
/// transaction. Two concurrent first syncs of one address race on the unique index; the
/// loser sees a unique violation and is retried once, when it finds the winner's member.
pub async fn sync(db: &Db, org_id: i64, req: &MemberSync) -> Result<SyncOutcome, SyncError> {
    match sync_once(db, org_id, req).await {
        Err(SyncError::Db(e)) if super::is_unique_violation(&e) => {
            match sync_once(db, org_id, req).await {
                Err(SyncError::Db(e)) if super::is_unique_violation(&e) => {
                    Err(SyncError::conflict(
                        "email",
                        "A concurrent change conflicted with this sync; retry it.",
                    ))
                }
                other => other,
            }
        }
        other => other,
    }
}

async fn sync_once(db: &Db, org_id: i64, req: &MemberSync) -> Result<SyncOutcome, SyncError> {
    let mut tx = db.begin().await?;
    let now = Ts::now();
    let (member, created) = upsert(&mut tx, org_id, req, now).await?;
    if created {
        events::emit(
            &mut tx,
            org_id,
            "user.created",
            json!({
                "user_id": member.id,
                "email": member.email,
                "name": member.name,
                "role": member.role,
            }),
        )
        .await?;
    }
    let mut plan_id = None;
    let access = match &req.access {
        Some(a) => {
            let plan = plans::find_in(&mut tx, org_id, &a.plan).await?.ok_or_else(|| {
                SyncError::invalid(
                    "access",
                    "not_found",
                    "No plan of this organization matches the given planId, processorPriceId, altProcessorPlanId or planName.",
                )
            })?;
            plan_id = Some(plan.id);
            Some(access::upsert(&mut tx, org_id, member.id, &plan, a, now).await?)
        }
        None => None,
    };
    let payment = match &req.payment {
        Some(p) => Some(payments::upsert(&mut tx, org_id, member.id, plan_id, p, now).await?),
        None => None,
    };
    tx.commit().await?;
    Ok(SyncOutcome {
        member,
        created,
        access,
        payment,
    })
}

async fn find_by_id(tx: &mut Tx, org_id: i64, id: Uuid) -> DbResult<Option<Member>> {
    let sql = format!("SELECT {COLUMNS} FROM members WHERE org_id = $1 AND id = $2");
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(id)
            .fetch_optional(&mut **t)
            .await.map_err(crate::db::StoreError::from)
    })
}

async fn find_by_email(tx: &mut Tx, org_id: i64, email: &str) -> DbResult<Option<Member>> {
    let sql = format!("SELECT {COLUMNS} FROM members WHERE org_id = $1 AND email_lower = $2");
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(fold(email))
            .fetch_optional(&mut **t)
            .await.map_err(crate::db::StoreError::from)
    })
}

/// The case-insensitive form of an address, the same on both backends.
fn fold(email: &str) -> String {
    email.to_lowercase()
}

/// Finds the member (by `userId` when given and known, else by email) and applies the
/// sent fields, or creates it. Returns the member and whether it was created.
async fn upsert(
    tx: &mut Tx,
    org_id: i64,
    req: &MemberSync,
    now: Ts,
) -> Result<(Member, bool), SyncError> {
    let by_id = match req.user_id {
        Some(id) => find_by_id(tx, org_id, id).await?,
        None => None,
    };
    let existing = match by_id {
        Some(m) => {
            if fold(&m.email) != fold(&req.email)
                && let Some(owner) = find_by_email(tx, org_id, &req.email).await?
            {
                return Err(SyncError::conflict(
                    "email",
                    format!(
                        "The email is already used by another member ({}).",
                        owner.id
                    ),
                ));
            }
            Some(m)
        }
        None => match find_by_email(tx, org_id, &req.email).await? {
            Some(m) if req.user_id.is_some_and(|id| id != m.id) => {
                return Err(SyncError::conflict(
                    "userId",
                    format!(
                        "A member with this email exists with a different userId ({}).",
                        m.id
                    ),
                ));
            }
            found => found,
        },
    };
    match existing {
        Some(m) => Ok((update(tx, m, req, now).await?, false)),
        None => Ok((insert(tx, org_id, req, now).await?, true)),
    }
}

async fn insert(tx: &mut Tx, org_id: i64, req: &MemberSync, now: Ts) -> DbResult<Member> {
    let m = Member {
        id: req.user_id.unwrap_or_else(Uuid::now_v7),
        organization_id: org_id,
        email: req.email.clone(),
        name: req.name.clone().unwrap_or_else(|| local_part(&req.email)),
        role: req.role.unwrap_or(Role::Jobseeker),
        approval_status: req.approval_status.unwrap_or(ApprovalStatus::Approved),
        profile_picture: req.profile_picture.clone().flatten(),
        description: req.description.clone().flatten(),
        custom_fields: req.custom_fields.clone().flatten().map(Json),
        created_at: now,
        updated_at: now,
    };
    dispatch_tx!(tx, t => {
        sqlx::query(
            "INSERT INTO members (id, org_id, email, email_lower, name, role, approval_status,
                 profile_picture, description, custom_fields, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)",
        )
        .bind(m.id)
        .bind(org_id)
        .bind(&m.email)
        .bind(fold(&m.email))
        .bind(&m.name)
        .bind(m.role)
        .bind(m.approval_status)
        .bind(&m.profile_picture)
        .bind(&m.description)
        .bind(&m.custom_fields)
        .bind(now)
        .execute(&mut **t)
        .await?;
    });
    Ok(m)
}

async fn update(tx: &mut Tx, stored: Member, req: &MemberSync, now: Ts) -> DbResult<Member> {
    let mut m = stored.clone();
    m.email = req.email.clone();
    if let Some(v) = &req.name {
        m.name = v.clone();
    }
    if let Some(v) = req.role {
        m.role = v;
    }
    if let Some(v) = req.approval_status {
        m.approval_status = v;
    }
    if let Some(v) = &req.profile_picture {
        m.profile_picture = v.clone();
    }
    if let Some(v) = &req.description {
        m.description = v.clone();
    }
    if let Some(v) = &req.custom_fields {
        m.custom_fields = v.clone().map(Json);
    }
    if m == stored {
        return Ok(m);
    }
    m.updated_at = now;
    dispatch_tx!(tx, t => {
        sqlx::query(
            "UPDATE members SET email = $3, email_lower = $4, name = $5, role = $6, approval_status = $7,
                 profile_picture = $8, description = $9, custom_fields = $10, updated_at = $11
             WHERE org_id = $1 AND id = $2",
        )
        .bind(m.organization_id)
        .bind(m.id)
        .bind(&m.email)
        .bind(fold(&m.email))
        .bind(&m.name)
        .bind(m.role)
        .bind(m.approval_status)
        .bind(&m.profile_picture)
        .bind(&m.description)
        .bind(&m.custom_fields)
        .bind(now)
        .execute(&mut **t)
        .await?;
    });
    Ok(m)
}

/// The part of an address before the at-sign: the default name.
fn local_part(email: &str) -> String {
    email.split('@').next().unwrap_or(email).to_string()
}

/// Every member of an organization, oldest first (used by tests and tooling).
pub async fn list(db: &Db, org_id: i64) -> DbResult<Vec<Member>> {
    let sql = format!("SELECT {COLUMNS} FROM members WHERE org_id = $1 ORDER BY created_at, id");
    crate::dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        assert_eq!(local_part("Jane.Doe+x@example.com"), "Jane.Doe+x");
        assert_eq!(fold("ÉLodie@Example.COM"), "élodie@example.com");
    }
}
