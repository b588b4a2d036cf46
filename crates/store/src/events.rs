//! The event outbox. Resource writes call [`emit`] inside their own transaction, so an
//! event exists exactly when the change that caused it was committed. Writing one wakes
//! the webhook workers: in this process at once, on every node through PostgreSQL's
//! `LISTEN/NOTIFY` (the outbox worker waits for notifications naming [`OUTBOX_CHANNEL`]).

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::{Db, DbResult, OrgId, Ts, Tx};
use crate::{dispatch, dispatch_tx};

/// An event payload and its type (`job.created`, ...).
pub trait Payload: serde::Serialize {
    fn event_type(&self) -> &'static str;
}

/// Writes one typed event into the outbox inside `tx`.
pub async fn emit_event(tx: &mut Tx, org_id: OrgId, event: &impl Payload) -> DbResult<Uuid> {
    emit(tx, org_id, event.event_type(), encode(event)?).await
}

/// The payload of `event`, as the outbox stores it.
pub fn encode(event: &impl Payload) -> DbResult<Value> {
    serde_json::to_value(event)
        .map_err(|e| super::StoreError::Other(sqlx::Error::Encode(Box::new(e))))
}

/// Writes one event into the outbox inside `tx`.
pub async fn emit(tx: &mut Tx, org_id: OrgId, event_type: &str, data: Value) -> DbResult<Uuid> {
    let id = Uuid::now_v7();
    let now = tx.now();
    dispatch_tx!(tx, t => {
        sqlx::query("INSERT INTO events (id, org_id, event_type, data, occurred_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(id)
            .bind(org_id)
            .bind(event_type)
            .bind(Json(&data))
            .bind(now)
            .execute(&mut **t)
            .await?;
    });
    wake(tx);
    Ok(id)
}

/// Writes the events of `events` (organization, type, payload) into the outbox inside
/// `tx` with one statement, in their order (a batch of writes in one transaction).
pub async fn emit_all(tx: &mut Tx, events: &[(OrgId, &str, Value)]) -> DbResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let now = tx.now();
    dispatch_tx!(tx, t => {
        let mut qb = sqlx::QueryBuilder::new(
            "INSERT INTO events (id, org_id, event_type, data, occurred_at) ",
        );
        qb.push_values(events, |mut row, (org_id, event_type, data)| {
            row.push_bind(Uuid::now_v7())
                .push_bind(*org_id)
                .push_bind(*event_type)
                .push_bind(Json(data))
                .push_bind(now);
        });
        qb.build().persistent(false).execute(&mut **t).await?;
    });
    wake(tx);
    Ok(())
}

/// Wakes the webhook workers: on PostgreSQL every node's listener, once `tx` commits; in
/// this process at once (on SQLite the worker's fan-out then waits for the write lock, so
/// it reads the events after the commit).
fn wake(tx: &mut Tx) {
    tx.notify_after_commit(OUTBOX_CHANNEL);
    OUTBOX_WAKE.notify_waiters();
}

/// The PostgreSQL notification channel of new outbox work.
pub const OUTBOX_CHANNEL: &str = "jobboard_outbox";

/// Woken when events or deliveries are written in this process.
pub static OUTBOX_WAKE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Events not yet fanned out into deliveries.
pub async fn pending_count(db: &Db) -> DbResult<i64> {
    dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE dispatched_at IS NULL").fetch_one(p).await.map_err(crate::StoreError::from)
    })
}

/// An event as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Event {
    pub id: Uuid,
    pub org_id: OrgId,
    pub event_type: String,
    pub data: Json<Value>,
    pub occurred_at: Ts,
}

/// The events of one organization, oldest first (used by tests and tooling).
pub async fn list_for_org(db: &Db, org_id: OrgId) -> DbResult<Vec<Event>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT id, org_id, event_type, data, occurred_at FROM events WHERE org_id = $1 ORDER BY occurred_at, id")
            .bind(org_id)
            .fetch_all(p)
            .await.map_err(crate::StoreError::from)
    })
}
