//! Group commit of job creations on SQLite: one task takes every creation waiting for the
//! single writer and commits them in one transaction (each job with its event), so the
//! commit and the full-text index's segment writes are shared. Each caller is answered
//! after the commit that stored its job. A batch in which anything other than a job's own
//! insert fails is rolled back and its creations are run one by one, so one creation's
//! failure never undoes another's.

use tokio::sync::{mpsc, oneshot};

use super::{events, model::Job, store};
use crate::{
    OrgId, Ts,
    db::{Db, DbResult, Pool, Tx},
};

/// A creation waiting for the SQLite writer.
struct Pending {
    org_id: OrgId,
    job: Job,
    reply: oneshot::Sender<DbResult<Job>>,
}

/// The queue of one database's creations (kept in [`Db::queue`]).
struct Queue(mpsc::UnboundedSender<Pending>);

/// Most creations committed in one transaction.
const MAX_BATCH: usize = 64;

/// Creates `job`: batched with concurrent creations on SQLite, alone on PostgreSQL.
pub(super) async fn create(db: &Db, org_id: OrgId, job: Job) -> DbResult<Job> {
    if let Pool::Sqlite(pool) = &*db.writer() {
        let queue = db.queue(|db| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(drain(db.without_queues(), pool.clone(), rx));
            Queue(tx)
        });
        let (reply, answer) = oneshot::channel();
        let pending = Pending {
            org_id,
            job: job.clone(),
            reply,
        };
        if queue.0.send(pending).is_ok()
            && let Ok(result) = answer.await
        {
            return result;
        }
    }
    store::create_alone(db, org_id, &job).await
}

/// Commits the queued creations in batches ([`Db::next_batch`]).
async fn drain(db: Db, pool: sqlx::SqlitePool, mut rx: mpsc::UnboundedReceiver<Pending>) {
    // The creation time of the last job stored: each job is created after the one before
    // it, however close the clock's readings.
    let mut last = Ts::from_micros(0);
    while let Some(batch) = Db::next_batch(&mut rx, MAX_BATCH).await {
        match commit(&db, &pool, &batch, &mut last).await {
            Ok(results) => {
                for (p, r) in batch.into_iter().zip(results) {
                    let _ = p.reply.send(r);
                }
            }
            Err(_) => {
                // Rolled back as a whole: each creation on its own.
                for p in batch {
                    let r = store::create_alone(&db, p.org_id, &p.job).await;
                    let _ = p.reply.send(r);
                }
            }
        }
    }
}

/// Inserts every creation of `batch` and commits once. A creation whose own insert fails
/// (which leaves nothing behind) gets its error; any other failure fails the batch.
async fn commit(
    db: &Db,
    pool: &sqlx::SqlitePool,
    batch: &[Pending],
    last: &mut Ts,
) -> DbResult<Vec<DbResult<Job>>> {
    let out = db.outgoing();
    let mut tx = Tx::sqlite(db, pool.begin_with("BEGIN IMMEDIATE").await?);
    let mut results = Vec::with_capacity(batch.len());
    for p in batch {
        let at = Ts::from_micros(tx.now().micros().max(last.micros() + 1));
        *last = at;
        let inserted = store::insert_new(&mut tx, p.org_id, &p.job, at).await;
        if let Ok(job) = &inserted {
            store::emit(&mut tx, p.org_id, events::created(job)).await?;
            super::notices::job_written(&mut tx, out, p.org_id, None, job).await?;
        }
        results.push(inserted);
    }
    tx.commit().await?;
    Ok(results)
}
