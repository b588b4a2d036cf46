//! Members: the operations the API, the board and the dashboard call to sync a member of
//! the board, with its access (subscription) record and a payment, and to read them back.
//! A sync validates its body (every bad field at once), finds or creates the member, and
//! writes the member, the access record, the payment and their events in one transaction.

mod access;
mod action;
pub mod events;
mod member;
pub mod model;
mod payment;
mod read;
mod store;

pub use member::same_address;
pub use model::*;

use crate::{
    Error, Input, MemberId, OrgId, Result, Ts,
    db::{Db, Tx, events as outbox},
};

/// Creates or updates a member from a `POST /members/sync` body, with its `access` and
/// `payment` blocks when sent. Matches by `userId` when it names a member of the
/// organization, else by address (see [`same_address`]), else creates the member. Emits
/// `user.created`, `subscription.created`, `subscription.canceled` and `payment.received`
/// as they happen; nothing of a refused sync is stored.
pub async fn sync(db: &Db, org_id: OrgId, body: Input) -> Result<Synced> {
    let req = MemberSyncIn::parse(body)?;
    store::sync(db, org_id, &req).await
}

/// Runs a `POST /members/access` action on the member it names: on its access record
/// (see the `action` rules; `activate` may create the record), or, for `delete_member`,
/// removes the member and its access records (its payments stay, with no member). Emits
/// `subscription.created`, `subscription.canceled`, `subscription.updated` or
/// `user.deleted` in the same transaction.
pub async fn act(db: &Db, org_id: OrgId, body: Input) -> Result<Acted> {
    let req = AccessActionIn::parse(body)?;
    store::act(db, org_id, &req).await
}

/// A page of the organization's members, newest first, as `q` filters them.
pub async fn page(db: &Db, org_id: OrgId, q: &MemberListQuery) -> Result<MemberPage> {
    let (rows, total) = store::page(db, org_id, q).await?;
    Ok(MemberPage { rows, total })
}

/// The id of the member `lookup` names (its id, or its address compared as
/// [`same_address`] does), if there is one.
pub async fn id_of(db: &Db, org_id: OrgId, lookup: &str) -> Result<Option<MemberId>> {
    Ok(named(db, org_id, lookup).await?.map(|m| m.id))
}

/// The member `lookup` names: its id, else its address.
async fn named(db: &Db, org_id: OrgId, lookup: &str) -> Result<Option<Member>> {
    Ok(match lookup.parse::<MemberId>() {
        Ok(id) => store::member_read(db, org_id, id).await?,
        Err(_) => store::member_with_address(db, org_id, lookup).await?,
    })
}

/// The member `lookup` names (its id, or its address compared as [`same_address`] does),
/// with its access records, payments and whether it passes the paywall now.
pub async fn lookup(db: &Db, org_id: OrgId, lookup: &str) -> Result<MemberRecord> {
    let member = named(db, org_id, lookup)
        .await?
        .ok_or(Error::NotFound("member"))?;
    let subscriptions = store::access_of(db, org_id, member.id).await?;
    let payments = store::payments(db, org_id, Some(member.id)).await?;
    let now = db.now();
    Ok(MemberRecord {
        has_valid_paywall_subscription: subscriptions.iter().any(|a| opens_paywall(a, now)),
        member,
        subscriptions,
        payments,
    })
}

/// Cancels the access records whose `cancelAt` has come (see the scheduler), each with
/// `subscription.canceled`, once even with several nodes. Answers how many moved.
pub async fn cancel_due(db: &Db, now: Ts) -> Result<u64> {
    Ok(store::cancel_due(db, now).await?)
}

/// Every member of the organization, oldest first.
pub async fn list(db: &Db, org_id: OrgId) -> Result<Vec<Member>> {
    Ok(store::members(db, org_id).await?)
}

/// The access records of a member, oldest first.
pub async fn access_of(db: &Db, org_id: OrgId, user_id: MemberId) -> Result<Vec<Access>> {
    Ok(store::access_of(db, org_id, user_id).await?)
}

/// The payments of a member, oldest first.
pub async fn payments_of(db: &Db, org_id: OrgId, user_id: MemberId) -> Result<Vec<Payment>> {
    Ok(store::payments(db, org_id, Some(user_id)).await?)
}

/// Every payment of the organization, oldest first.
pub async fn payments(db: &Db, org_id: OrgId) -> Result<Vec<Payment>> {
    Ok(store::payments(db, org_id, None).await?)
}

/// Member `id` of `org_id`.
pub(crate) async fn member(db: &Db, org_id: OrgId, id: MemberId) -> Result<Option<Member>> {
    Ok(store::member_read(db, org_id, id).await?)
}

/// Member `id` of `org_id`, read in `tx` (locked on PostgreSQL until `tx` ends).
pub(crate) async fn member_by_id_in(
    tx: &mut Tx,
    org_id: OrgId,
    id: MemberId,
) -> Result<Option<Member>> {
    Ok(store::member_by_id(tx, org_id, id).await?)
}

/// The member of `org_id` whose address is `email` (see [`same_address`]).
pub(crate) async fn member_of_address(
    db: &Db,
    org_id: OrgId,
    email: &str,
) -> Result<Option<Member>> {
    Ok(store::member_with_address(db, org_id, email).await?)
}

/// The member of `org_id` whose address is `email` (see [`same_address`]), read in `tx`.
pub(crate) async fn member_in(tx: &mut Tx, org_id: OrgId, email: &str) -> Result<Option<Member>> {
    Ok(store::member_by_email(tx, org_id, email).await?)
}

/// Creates a member of `org_id` in `tx` (signing up on the board), with `user.created` as
/// a sync that creates a member emits it. Its name is the part of the address before the
/// at-sign until the member or a sync changes it.
pub(crate) async fn create_in(
    tx: &mut Tx,
    org_id: OrgId,
    email: &str,
    role: Role,
    approval_status: ApprovalStatus,
) -> Result<Member> {
    let now = tx.now();
    let m = Member {
        id: MemberId(uuid::Uuid::now_v7()),
        organization_id: org_id,
        email: email.to_string(),
        name: member::local_part(email),
        role,
        approval_status,
        profile_picture: None,
        description: None,
        custom_fields: None,
        created_at: now,
        updated_at: now,
    };
    store::save_member(tx, &m, true).await?;
    outbox::emit_event(tx, org_id, &events::user_created(&m)).await?;
    Ok(m)
}

/// Deletes member `m` in `tx` as `members/access`'s `delete_member` does (its access
/// records, sessions and saved jobs go; its payments and jobs stay without it), with
/// `user.deleted`.
pub(crate) async fn delete_in(tx: &mut Tx, org_id: OrgId, m: &Member) -> Result<()> {
    let now = tx.now();
    store::delete_member(tx, org_id, m, now).await?;
    outbox::emit_event(tx, org_id, &events::user_deleted(m)).await?;
    Ok(())
}

/// Gives member `user_id` the posts of a pack of `plan` bought through the board's
/// checkout (order `order_id`), in `tx`: a new access record (`active`, the plan's
/// `jobsIncluded`), with `subscription.created` as a sync that creates one.
pub(crate) async fn grant_pack_in(
    tx: &mut Tx,
    org_id: OrgId,
    user_id: MemberId,
    plan: &crate::plans::Plan,
    order_id: uuid::Uuid,
) -> Result<Access> {
    let mut a = access::fresh(org_id, user_id, plan, tx.now());
    a.metadata = crate::JsonDoc(serde_json::json!({ "order_id": order_id }));
    store::insert_access(tx, &a).await?;
    outbox::emit_event(tx, org_id, &events::subscription_created(&a)).await?;
    Ok(a)
}

/// Takes back the posts of a refunded pack, in `tx`: its access record `id` is canceled
/// with none left (posts already made stay), with `subscription.canceled`.
pub(crate) async fn revoke_pack_in(tx: &mut Tx, org_id: OrgId, id: uuid::Uuid) -> Result<()> {
    if let Some(a) = store::revoke_access(tx, org_id, id).await? {
        outbox::emit_event(tx, org_id, &events::subscription_canceled(&a)).await?;
    }
    Ok(())
}

/// Records a new payment in `tx` (a paid post fulfilled), with `payment.received` when it
/// succeeded, as a sync with a payment block does.
pub(crate) async fn record_payment_in(tx: &mut Tx, p: &Payment) -> Result<()> {
    store::save_payment(tx, p, true).await?;
    if p.status == PaymentStatus::Succeeded {
        outbox::emit_event(tx, p.organization_id, &events::payment_received(p)).await?;
    }
    Ok(())
}
