//! Members, access records and payments as stored, and the sync: the member, its access
//! record, its payment and their events written in one transaction, with the rules of
//! `member`, `access` and `payment` deciding what is written.

use uuid::Uuid;

use super::{
    access, action, events, member,
    model::{
        Access, AccessAction, AccessActionIn, AccessIn, AccessStatus, Acted, Member, MemberSyncIn,
        Payment, PaymentIn, Synced,
    },
    payment,
};
use crate::{
    Error, JobId, MemberId, OrgId, Result, Ts,
    db::{Backend, Db, DbResult, StoreError, Tx, events as outbox},
    dispatch, dispatch_tx, links,
    plans::{Plan, PlanRef, store as plans},
    save_row,
};

pub(super) use super::read::{
    access_of, member_read, member_with_address, members, page, payments,
};

pub(super) const MEMBER_COLUMNS: &str = "id, org_id AS organization_id, email, name, role, approval_status, \
     profile_picture, description, custom_fields, created_at, updated_at";

pub(super) const ACCESS_COLUMNS: &str = "id, org_id AS organization_id, user_id, plan_id, status, processor_subscription_id, \
     current_period_start, current_period_end, cancel_at, canceled_at, jobs_remaining, metadata, \
     created_at, updated_at";

pub(super) const PAYMENT_COLUMNS: &str = "id, org_id AS organization_id, user_id, job_id, plan_id, amount, currency, status, \
     payment_provider, processor_session_id, processor_payment_intent_id, metadata, created_at, updated_at";

/// Runs a sync. Two concurrent first syncs of one address race on the unique index of
/// the address; the loser sees a unique violation and is retried once, when it finds the
/// winner's member.
pub(super) async fn sync(db: &Db, org_id: OrgId, req: &MemberSyncIn) -> Result<Synced> {
    match sync_once(db, org_id, req).await {
        Err(Error::Store(e)) if e.is_unique() => match sync_once(db, org_id, req).await {
            Err(Error::Store(e)) if e.is_unique() => Err(member::raced()),
            other => other,
        },
        other => other,
    }
}

async fn sync_once(db: &Db, org_id: OrgId, req: &MemberSyncIn) -> Result<Synced> {
    let mut tx = db.begin().await?;
    let now = db.now();
    let (member, created) = write_member(&mut tx, org_id, req, now).await?;
    if created {
        outbox::emit_event(&mut tx, org_id, &events::user_created(&member)).await?;
    }
    let mut plan_id = None;
    let access = match &req.access {
        Some(a) => {
            let plan = plans::find_in(&mut tx, org_id, &access::plan_ref(a))
                .await?
                .ok_or_else(access::no_plan)?;
            plan_id = Some(plan.id);
            Some(write_access(&mut tx, org_id, member.id, &plan, a, now).await?)
        }
        None => None,
    };
    let payment = match &req.payment {
        Some(p) => Some(write_payment(&mut tx, org_id, member.id, plan_id, p, now).await?),
        None => None,
    };
    tx.commit().await?;
    Ok(Synced {
        member,
        created,
        access,
        payment,
    })
}

/// Runs an access action: the member, the record acted on, the change and its event in
/// one transaction (see [`action`] for what each action does).
pub(super) async fn act(db: &Db, org_id: OrgId, req: &AccessActionIn) -> Result<Acted> {
    let mut tx = db.begin().await?;
    let now = db.now();
    let member = named_member(&mut tx, org_id, req).await?;
    if req.action == AccessAction::DeleteMember {
        delete_member(&mut tx, org_id, &member, now).await?;
        outbox::emit_event(&mut tx, org_id, &events::user_deleted(&member)).await?;
        tx.commit().await?;
        return Ok(Acted {
            member,
            access: None,
            created: false,
        });
    }
    let plan = match req.plan_id {
        Some(id) => {
            let named = PlanRef {
                id: Some(id),
                ..PlanRef::default()
            };
            Some(
                plans::find_in(&mut tx, org_id, &named)
                    .await?
                    .ok_or_else(action::no_plan)?,
            )
        }
        None => None,
    };
    let found = match &req.processor_subscription_id {
        Some(sub) => match access_by_subscription(&mut tx, org_id, sub).await? {
            Some(a) if a.user_id != member.id => return Err(access::subscription_taken()),
            Some(a) if plan.as_ref().is_some_and(|p| p.id != a.plan_id) => {
                return Err(action::other_plan());
            }
            found => found,
        },
        None => match &plan {
            Some(p) => access_by_plan(&mut tx, org_id, member.id, p.id, false).await?,
            None => latest_access(&mut tx, org_id, member.id).await?,
        },
    };
    let (stored, created) = match (found, &plan) {
        (Some(a), _) => (a, false),
        (None, Some(p)) if req.action == AccessAction::Activate => {
            let mut a = access::fresh(org_id, member.id, p, now);
            a.processor_subscription_id = req.processor_subscription_id.clone();
            (a, true)
        }
        (None, _) => return Err(Error::NotFound("access record")),
    };
    let mut r = action::act(&stored, req.action, req.effective_at, now)?;
    if created {
        save_access(&mut tx, &r, true).await?;
        outbox::emit_event(&mut tx, org_id, &events::subscription_created(&r)).await?;
    } else if r != stored {
        r.updated_at = now;
        save_access(&mut tx, &r, false).await?;
        if r.status == AccessStatus::Canceled && stored.status != AccessStatus::Canceled {
            outbox::emit_event(&mut tx, org_id, &events::subscription_canceled(&r)).await?;
        } else {
            outbox::emit_event(&mut tx, org_id, &events::subscription_updated(&stored, &r)).await?;
        }
    }
    tx.commit().await?;
    Ok(Acted {
        member,
        access: Some(r),
        created,
    })
}

/// The member an action names: by `userId`, by `email`, or by both when they agree.
async fn named_member(tx: &mut Tx, org_id: OrgId, req: &AccessActionIn) -> Result<Member> {
    let by_id = match req.user_id {
        Some(id) => Some(
            member_by_id(tx, org_id, id)
                .await?
                .ok_or(Error::NotFound("member"))?,
        ),
        None => None,
    };
    match (by_id, &req.email) {
        (Some(m), Some(email)) if !member::same_address(&m.email, email) => {
            Err(action::member_mismatch())
        }
        (Some(m), _) => Ok(m),
        (None, Some(email)) => member_by_email(tx, org_id, email)
            .await?
            .ok_or(Error::NotFound("member")),
        (None, None) => Err(Error::NotFound("member")),
    }
}

/// Removes the member and its access records (its sessions and saved jobs go with it);
/// its payments and orders stay, with no member, and the jobs it owns stay, with no
/// owner.
pub(super) async fn delete_member(tx: &mut Tx, org_id: OrgId, m: &Member, now: Ts) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query("UPDATE payments SET user_id = NULL, updated_at = $3 WHERE org_id = $1 AND user_id = $2")
            .bind(org_id).bind(m.id).bind(now).execute(&mut **t).await?;
        sqlx::query("UPDATE orders SET member_id = NULL, updated_at = $3 WHERE org_id = $1 AND member_id = $2")
            .bind(org_id).bind(m.id).bind(now).execute(&mut **t).await?;
        sqlx::query("DELETE FROM member_access WHERE org_id = $1 AND user_id = $2")
            .bind(org_id).bind(m.id).execute(&mut **t).await?;
        sqlx::query("UPDATE jobs SET owner_user_id = NULL WHERE org_id = $1 AND owner_user_id = $2")
            .bind(org_id).bind(m.id).execute(&mut **t).await?;
        sqlx::query("DELETE FROM members WHERE org_id = $1 AND id = $2")
            .bind(org_id).bind(m.id).execute(&mut **t).await?;
    });
    Ok(())
}

/// The member's latest record (the last created).
async fn latest_access(tx: &mut Tx, org_id: OrgId, user_id: MemberId) -> DbResult<Option<Access>> {
    let sql = format!(
        "SELECT {ACCESS_COLUMNS} FROM member_access WHERE org_id = $1 AND user_id = $2
         ORDER BY created_at DESC, id DESC LIMIT 1"
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(user_id)
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// Finds the member (by `userId` when given and known, else by address) and applies the
/// sync, or creates it. Returns the member and whether it was created.
async fn write_member(
    tx: &mut Tx,
    org_id: OrgId,
    req: &MemberSyncIn,
    now: Ts,
) -> Result<(Member, bool)> {
    let by_id = match req.user_id {
        Some(id) => member_by_id(tx, org_id, id).await?,
        None => None,
    };
    let existing = match by_id {
        Some(m) => {
            if !member::same_address(&m.email, &req.email)
                && let Some(owner) = member_by_email(tx, org_id, &req.email).await?
            {
                return Err(member::email_taken(&owner));
            }
            Some(m)
        }
        None => match member_by_email(tx, org_id, &req.email).await? {
            Some(m) if req.user_id.is_some_and(|id| id != m.id) => {
                return Err(member::user_id_differs(&m));
            }
            found => found,
        },
    };
    match existing {
        Some(stored) => {
            let mut m = member::updated(&stored, req);
            if m != stored {
                m.updated_at = now;
                save_member(tx, &m, false).await?;
            }
            Ok((m, false))
        }
        None => {
            let m = member::created(org_id, req, now);
            save_member(tx, &m, true).await?;
            Ok((m, true))
        }
    }
}

/// Updates the member's record for the block's subscription (or, failing that, for its
/// plan), else creates one; writes `subscription.created` / `subscription.canceled`.
async fn write_access(
    tx: &mut Tx,
    org_id: OrgId,
    user_id: MemberId,
    plan: &Plan,
    a: &AccessIn,
    now: Ts,
) -> Result<Access> {
    let existing = match &a.processor_subscription_id {
        Some(sub) => match access_by_subscription(tx, org_id, sub).await? {
            Some(found) if found.user_id != user_id => return Err(access::subscription_taken()),
            Some(found) => Some(found),
            None => access_by_plan(tx, org_id, user_id, plan.id, true).await?,
        },
        None => access_by_plan(tx, org_id, user_id, plan.id, false).await?,
    };
    let created = existing.is_none();
    let stored = existing.unwrap_or_else(|| access::fresh(org_id, user_id, plan, now));
    let access::Applied {
        record: mut r,
        newly_canceled,
    } = access::apply(&stored, created, plan, a, now)?;
    if created {
        save_access(tx, &r, true).await?;
        outbox::emit_event(tx, org_id, &events::subscription_created(&r)).await?;
    } else if r != stored {
        r.updated_at = now;
        save_access(tx, &r, false).await?;
    }
    if newly_canceled && !created {
        outbox::emit_event(tx, org_id, &events::subscription_canceled(&r)).await?;
    }
    Ok(r)
}

/// Records the payment (or updates the one with the same processor intent or session id);
/// writes `payment.received` when it is created as, or moves to, succeeded.
async fn write_payment(
    tx: &mut Tx,
    org_id: OrgId,
    user_id: MemberId,
    access_plan: Option<Uuid>,
    p: &PaymentIn,
    now: Ts,
) -> Result<Payment> {
    if !job_exists(tx, org_id, p.job_id).await? {
        return Err(payment::job_not_found());
    }
    if let Some(id) = p.plan_id
        && !plans::exists_in(tx, org_id, id).await?
    {
        return Err(payment::plan_not_found());
    }
    let by_intent = match &p.processor_payment_intent_id {
        Some(v) => payment_by(tx, org_id, "processor_payment_intent_id", v).await?,
        None => None,
    };
    let by_session = match &p.processor_session_id {
        Some(v) => payment_by(tx, org_id, "processor_session_id", v).await?,
        None => None,
    };
    let existing = payment::matching(by_intent, by_session, user_id)?;
    let created = existing.is_none();
    let stored = existing.unwrap_or_else(|| payment::fresh(org_id, user_id, p, now));
    let mut r = payment::apply(&stored, p, access_plan);
    if created {
        save_payment(tx, &r, true).await?;
    } else if r != stored {
        r.updated_at = now;
        save_payment(tx, &r, false).await?;
    }
    if payment::received(created, &stored, &r) {
        outbox::emit_event(tx, org_id, &events::payment_received(&r)).await?;
    }
    Ok(r)
}

/// On PostgreSQL, a member read inside a write is locked until the write commits, so two
/// syncs or actions on one member run one after the other (SQLite has one writer anyway).
fn lock(tx: &Tx) -> &'static str {
    if tx.backend() == Backend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    }
}

pub(super) async fn member_by_id(
    tx: &mut Tx,
    org_id: OrgId,
    id: MemberId,
) -> DbResult<Option<Member>> {
    let sql = format!(
        "SELECT {MEMBER_COLUMNS} FROM members WHERE org_id = $1 AND id = $2{}",
        lock(tx)
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(id)
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// The member whose address is `email`, compared by [`links::email_identity`] (the
/// stored `email_lower` column, under a unique index per organization).
pub(super) async fn member_by_email(
    tx: &mut Tx,
    org_id: OrgId,
    email: &str,
) -> DbResult<Option<Member>> {
    let sql = format!(
        "SELECT {MEMBER_COLUMNS} FROM members WHERE org_id = $1 AND email_lower = $2{}",
        lock(tx)
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(links::email_identity(email))
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// Stores a member: inserted when `new`, else updated.
pub(super) async fn save_member(tx: &mut Tx, m: &Member, new: bool) -> DbResult<()> {
    save_row!(tx, "members", new new, conflict "org_id, id", keep [id, org_id, created_at], {
        id: m.id,
        org_id: m.organization_id,
        email: &m.email,
        email_lower: links::email_identity(&m.email),
        name: &m.name,
        role: m.role,
        approval_status: m.approval_status,
        profile_picture: &m.profile_picture,
        description: &m.description,
        custom_fields: &m.custom_fields,
        created_at: m.created_at,
        updated_at: m.updated_at,
    })
}

async fn access_by_subscription(tx: &mut Tx, org_id: OrgId, sub: &str) -> DbResult<Option<Access>> {
    let sql = format!(
        "SELECT {ACCESS_COLUMNS} FROM member_access WHERE org_id = $1 AND processor_subscription_id = $2"
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(sub)
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// The member's latest record of this plan (only those without a subscription id when
/// `unbound_only`).
async fn access_by_plan(
    tx: &mut Tx,
    org_id: OrgId,
    user_id: MemberId,
    plan_id: Uuid,
    unbound_only: bool,
) -> DbResult<Option<Access>> {
    let extra = if unbound_only {
        " AND processor_subscription_id IS NULL"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {ACCESS_COLUMNS} FROM member_access WHERE org_id = $1 AND user_id = $2 AND plan_id = $3{extra}
         ORDER BY updated_at DESC, id DESC LIMIT 1"
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(user_id)
            .bind(plan_id)
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// Inserts a new access record (a pack bought on the board).
pub(super) async fn insert_access(tx: &mut Tx, r: &Access) -> DbResult<()> {
    save_access(tx, r, true).await
}

/// Cancels access record `id` with no posts left, once: the record as canceled, or
/// `None` when it is gone or was canceled before.
pub(super) async fn revoke_access(
    tx: &mut Tx,
    org_id: OrgId,
    id: Uuid,
) -> DbResult<Option<Access>> {
    let now = tx.now();
    let sql = format!(
        "UPDATE member_access SET status = 'canceled', jobs_remaining = 0, \
         canceled_at = COALESCE(canceled_at, $3), updated_at = $3 \
         WHERE org_id = $1 AND id = $2 AND status <> 'canceled' RETURNING {ACCESS_COLUMNS}"
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(id)
            .bind(now)
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// Stores an access record: inserted when `new`, else updated.
async fn save_access(tx: &mut Tx, r: &Access, new: bool) -> DbResult<()> {
    save_row!(tx, "member_access", new new, conflict "id", keep [id, org_id, user_id, created_at], {
        id: r.id,
        org_id: r.organization_id,
        user_id: r.user_id,
        plan_id: r.plan_id,
        status: r.status,
        processor_subscription_id: &r.processor_subscription_id,
        current_period_start: r.current_period_start,
        current_period_end: r.current_period_end,
        cancel_at: r.cancel_at,
        canceled_at: r.canceled_at,
        jobs_remaining: r.jobs_remaining,
        metadata: &r.metadata,
        created_at: r.created_at,
        updated_at: r.updated_at,
    })
}

/// True when `id` is a job of this organization (checked inside the sync's transaction).
async fn job_exists(tx: &mut Tx, org_id: OrgId, id: JobId) -> DbResult<bool> {
    let hit: Option<Uuid> = dispatch_tx!(tx, t => {
        sqlx::query_scalar("SELECT id FROM jobs WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .fetch_optional(&mut **t)
            .await?
    });
    Ok(hit.is_some())
}

/// The payment whose `column` (one of the two processor ids) is `value`.
async fn payment_by(
    tx: &mut Tx,
    org_id: OrgId,
    column: &'static str,
    value: &str,
) -> DbResult<Option<Payment>> {
    let sql = format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE org_id = $1 AND {column} = $2");
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(value)
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// Stores a payment: inserted when `new`, else updated.
pub(super) async fn save_payment(tx: &mut Tx, r: &Payment, new: bool) -> DbResult<()> {
    save_row!(tx, "payments", new new, conflict "id", keep [id, org_id, user_id, created_at], {
        id: r.id,
        org_id: r.organization_id,
        user_id: r.user_id,
        job_id: r.job_id,
        plan_id: r.plan_id,
        amount: r.amount,
        currency: &r.currency,
        status: r.status,
        payment_provider: r.payment_provider,
        processor_session_id: &r.processor_session_id,
        processor_payment_intent_id: &r.processor_payment_intent_id,
        metadata: &r.metadata,
        created_at: r.created_at,
        updated_at: r.updated_at,
    })
}

/// Moves every access record whose `cancel_at` has come (and which is not canceled or
/// expired yet) to `canceled`, each in its own transaction with `subscription.canceled`.
/// The move is guarded by the record's status, so with several nodes each happens once.
pub(super) async fn cancel_due(db: &Db, now: Ts) -> DbResult<u64> {
    let mut moved = 0;
    loop {
        let due: Vec<(OrgId, Uuid)> = dispatch!(db.reader(), p => {
            sqlx::query_as(
                "SELECT org_id, id FROM member_access
                 WHERE cancel_at IS NOT NULL AND status IN ('active', 'trialing', 'past_due') AND cancel_at <= $1
                 ORDER BY cancel_at LIMIT 200",
            )
            .bind(now)
            .fetch_all(p)
            .await?
        });
        let batch = due.len();
        for (org_id, id) in due {
            let mut tx = db.begin().await?;
            let sql = format!(
                "UPDATE member_access SET status = $4, canceled_at = COALESCE(canceled_at, cancel_at), updated_at = $3
                 WHERE org_id = $1 AND id = $2 AND cancel_at <= $3 AND status IN ('active', 'trialing', 'past_due')
                 RETURNING {ACCESS_COLUMNS}"
            );
            let record: Option<Access> = dispatch_tx!(&mut tx, t => {
                sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(org_id)
                    .bind(id)
                    .bind(now)
                    .bind(AccessStatus::Canceled)
                    .fetch_optional(&mut **t)
                    .await?
            });
            if let Some(r) = record {
                outbox::emit_event(&mut tx, org_id, &events::subscription_canceled(&r)).await?;
                tx.commit().await?;
                moved += 1;
            }
        }
        if batch < 200 {
            return Ok(moved);
        }
    }
}
