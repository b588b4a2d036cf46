//! Recording attempts: succeeded attempts (the common case) are written in batches. One
//! task per database takes every succeeded attempt waiting and records them together (one
//! statement on PostgreSQL, one transaction on SQLite), so delivery throughput is not
//! bounded by one write per attempt. Each sender is answered after the write that recorded
//! its attempt. A batch that fails as a whole is recorded attempt by attempt, so one
//! attempt's failure never loses another's record. Failed attempts, whose record decides
//! retries and the failure streak, are recorded one by one.

use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use jobboard_store::{Db, DbResult, Ts};

use jobboard_domain::webhooks::{self as store, Claimed, Next, Outcome};

/// A succeeded attempt waiting to be recorded.
struct Pending {
    owner: Uuid,
    delivery: Claimed,
    outcome: Outcome,
    now: Ts,
    reply: oneshot::Sender<DbResult<bool>>,
}

/// The queue of one database's succeeded attempts (kept in [`Db::queue`]).
struct Queue(mpsc::UnboundedSender<Pending>);

/// Most attempts recorded in one write.
const MAX_BATCH: usize = 256;

/// Records an attempt of a delivery leased by `owner` (see [`store::record`]): batched with
/// concurrent ones when it succeeded. Returns false when the lease was lost.
pub async fn record(
    db: &Db,
    owner: Uuid,
    delivery: Claimed,
    outcome: Outcome,
    next: Next,
    now: Ts,
    disable_after_us: i64,
) -> DbResult<bool> {
    if next != Next::Succeeded {
        return store::record(db, owner, &delivery, &outcome, next, now, disable_after_us).await;
    }
    let queue = db.queue(|db| {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(drain(db.without_queues(), rx));
        Queue(tx)
    });
    let (reply, answer) = oneshot::channel();
    let pending = Pending {
        owner,
        delivery,
        outcome,
        now,
        reply,
    };
    match queue.0.send(pending) {
        Ok(()) => match answer.await {
            Ok(result) => result,
            // The task ended without answering (only when it panicked): nothing is known
            // to be recorded; the lease runs out and the delivery is attempted again.
            Err(_) => Ok(false),
        },
        Err(mpsc::error::SendError(p)) => {
            store::record(
                db,
                owner,
                &p.delivery,
                &p.outcome,
                next,
                now,
                disable_after_us,
            )
            .await
        }
    }
}

/// Records the waiting attempts in batches ([`Db::next_batch`]).
async fn drain(db: Db, mut rx: mpsc::UnboundedReceiver<Pending>) {
    while let Some(batch) = Db::next_batch(&mut rx, MAX_BATCH).await {
        let items: Vec<store::Succeeded<'_>> = batch
            .iter()
            .map(|p| store::Succeeded {
                owner: p.owner,
                delivery: &p.delivery,
                outcome: &p.outcome,
                now: p.now,
            })
            .collect();
        match store::record_succeeded(&db, &items).await {
            Ok(recorded) => {
                drop(items);
                for (p, r) in batch.into_iter().zip(recorded) {
                    let _ = p.reply.send(Ok(r));
                }
            }
            Err(e) => {
                drop(items);
                tracing::debug!(error = ?e, n = batch.len(), "recording a batch of webhook attempts failed; recording one by one");
                for p in batch {
                    let r = store::record(
                        &db,
                        p.owner,
                        &p.delivery,
                        &p.outcome,
                        Next::Succeeded,
                        p.now,
                        0,
                    )
                    .await;
                    let _ = p.reply.send(r);
                }
            }
        }
    }
}
