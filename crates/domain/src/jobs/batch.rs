//! Group commit of job creations on SQLite: one task takes every creation waiting for the
//! single writer and commits them in one transaction (each job with its event), so the
//! commit and the full-text index's segment writes are shared. Each caller is answered
//! after the commit that stored its job. A batch in which anything other than a job's own
//! insert fails is rolled back and its creations are run one by one, so one creation's
//! failure never undoes another's.
//!
//! The jobs of a batch are inserted by one statement, their events by one more, and the
//! search engines' notices of them by a third. SQLite's full-text index writes
//! what it holds in memory to a segment of its own at the start of every statement that
//! may be undone alone, as a job's insert is (it fires triggers): inserted one by one,
//! every job would cost a segment and the merging of segments that follows. When that
//! statement fails (a job's row refused), the jobs are inserted one at a time in the same
//! transaction, each with its own result.

use std::collections::{BTreeSet, HashMap, HashSet};

use tokio::sync::{mpsc, oneshot};

use super::{events, model::Job, store};
use crate::{
    JobId, OrgId, Ts,
    db::{Backend, Db, DbResult, Outgoing, Pool, Tx, events as outbox, events::Payload},
    dispatch_tx,
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

/// Creates `job`: batched with concurrent creations on SQLite, alone on PostgreSQL (in
/// one statement unless it queues mail).
pub(super) async fn create(db: &Db, org_id: OrgId, job: Job) -> DbResult<Job> {
    match &*db.writer() {
        Pool::Postgres(pool) if !super::notices::created_with_mail(db.outgoing(), &job) => {
            return store::create_at_once(db, pool, org_id, &job).await;
        }
        Pool::Postgres(_) => {}
        Pool::Sqlite(pool) => {
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
    let mut tx = Tx::sqlite(db, pool.begin_with("BEGIN IMMEDIATE").await?);
    let mut rows: Vec<(OrgId, Job)> = batch.iter().map(|p| (p.org_id, p.job.clone())).collect();
    let results = store_all(&mut tx, db.outgoing(), &mut rows, last).await?;
    tx.commit().await?;
    Ok(results)
}

/// Stores the new jobs of `rows` in `tx`, each with its `job.created` and the search
/// engines' notices: created after `last` and each after the one before (`last` moves to
/// the last one's time), under slugs no job of its organization has. On SQLite a job
/// whose own insert fails (which leaves nothing behind) gets its error and the others are
/// stored; on PostgreSQL that fails the transaction, as any other failure does here
/// (`Err`).
pub(super) async fn store_all(
    tx: &mut Tx,
    out: Option<&Outgoing>,
    rows: &mut [(OrgId, Job)],
    last: &mut Ts,
) -> DbResult<Vec<DbResult<Job>>> {
    for (_, job) in rows.iter_mut() {
        let at = Ts::from_micros(tx.now().micros().max(last.micros() + 1));
        *last = at;
        job.created_at = at;
        job.updated_at = at;
    }
    free_slugs(tx, rows).await?;
    let results: Vec<DbResult<Job>> = match insert_all(tx, rows).await {
        Ok(stored) => stored.into_iter().map(Ok).collect(),
        // A failed statement aborts a PostgreSQL transaction.
        Err(e) if tx.backend() == Backend::Postgres => return Err(e),
        Err(e) => {
            tracing::debug!(error = %e, jobs = rows.len(), "a batch's insert failed: its jobs one at a time");
            let mut results = Vec::with_capacity(rows.len());
            for (org_id, job) in rows.iter() {
                results.push(store::insert_new(tx, *org_id, job, job.created_at).await);
            }
            results
        }
    };
    let created: Vec<(OrgId, &Job)> = rows
        .iter()
        .zip(&results)
        .filter_map(|((org_id, _), inserted)| inserted.as_ref().ok().map(|job| (*org_id, job)))
        .collect();
    let mut outgoing = Vec::with_capacity(created.len());
    for (org_id, job) in &created {
        for event in events::created(job) {
            outgoing.push((*org_id, event.event_type(), outbox::encode(&event)?));
        }
    }
    outbox::emit_all(tx, &outgoing).await?;
    super::notices::jobs_created(tx, out, &created).await?;
    Ok(results)
}

/// Gives each job a slug no job of its organization has, stored or earlier in `rows`:
/// the base one when it is free, else one with a random suffix (as [`store::insert_new`]
/// does one job at a time). Reads the taken base slugs with one statement per
/// organization.
async fn free_slugs(tx: &mut Tx, rows: &mut [(OrgId, Job)]) -> DbResult<()> {
    for (_, job) in rows.iter_mut() {
        job.slug = store::slug_for(job, 1);
    }
    let mut used: HashSet<(OrgId, String)> = HashSet::new();
    let orgs: BTreeSet<OrgId> = rows.iter().map(|(o, _)| *o).collect();
    for org_id in orgs {
        let slugs: BTreeSet<&str> = rows
            .iter()
            .filter(|(o, _)| *o == org_id)
            .map(|(_, j)| j.slug.as_str())
            .collect();
        let sql = format!(
            "SELECT slug FROM jobs WHERE org_id = $1 AND slug IN ({})",
            store::marks(2, slugs.len())
        );
        let taken: Vec<String> = dispatch_tx!(tx, t => {
            let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(org_id);
            for s in &slugs {
                q = q.bind(*s);
            }
            q.persistent(false).fetch_all(&mut **t).await?
        });
        used.extend(taken.into_iter().map(|s| (org_id, s)));
    }
    for (org_id, job) in rows.iter_mut() {
        let mut attempt = 1;
        while attempt < store::SLUG_ATTEMPTS && used.contains(&(*org_id, job.slug.clone())) {
            attempt += 1;
            job.slug = store::slug_for(job, attempt);
        }
        used.insert((*org_id, job.slug.clone()));
    }
    Ok(())
}

/// Inserts every row in one statement: all of them, or on failure none. Answers the jobs
/// as stored, in the order of `rows`. Like every statement whose text grows with a list,
/// it is not kept prepared (each batch size would stay prepared on the writer).
async fn insert_all(tx: &mut Tx, rows: &[(OrgId, Job)]) -> DbResult<Vec<Job>> {
    // On SQLite anonymous parameters (`?`): a numbered one is looked up by its name in the
    // list of the statement's names when it is bound, which with thousands of them took
    // longer than the insert. PostgreSQL numbers them.
    let width = Job::INSERTED.len() + 1;
    let values: Vec<String> = match tx.backend() {
        Backend::Sqlite => vec![format!("(?{})", ", ?".repeat(width - 1)); rows.len()],
        Backend::Postgres => (0..rows.len())
            .map(|i| format!("({})", store::marks(1 + i * width, width)))
            .collect(),
    };
    let sql = format!(
        "INSERT INTO jobs (org_id, {}) VALUES {} RETURNING {}",
        Job::INSERTED.join(", "),
        values.join(", "),
        Job::COLUMNS.join(", ")
    );
    let stored: Vec<Job> = dispatch_tx!(tx, t => {
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql));
        for (org_id, job) in rows {
            q = job.bind_insert(q.bind(*org_id));
        }
        q.persistent(false).fetch_all(&mut **t).await?
    });
    // RETURNING's order is not promised: each row is matched by its id.
    let mut by_id: HashMap<JobId, Job> = stored.into_iter().map(|j| (j.id, j)).collect();
    rows.iter()
        .map(|(_, job)| by_id.remove(&job.id).ok_or(sqlx::Error::RowNotFound.into()))
        .collect()
}
