//! Write transactions on either backend, and what a PostgreSQL commit tells the other
//! nodes.

use std::sync::Arc;

use sqlx::PgPool;

use crate::{Backend, CHANGES, Clock, Db, DbResult, Ts, writes};

/// An open write transaction on either backend, with the clock of its database (the time
/// its rows and events are stamped with, see [`Tx::now`]).
pub struct Tx {
    /// The open transaction: what [`crate::dispatch_tx!`] runs statements on.
    pub conn: TxConn,
    pub(crate) clock: Clock,
}

/// The connection of a [`Tx`]. On PostgreSQL it also carries the notification channels to
/// signal once it has committed (see [`Tx::notify_after_commit`]).
pub enum TxConn {
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>, AfterCommit),
}

/// What a PostgreSQL transaction signals to every node once it has committed.
pub struct AfterCommit {
    pub(crate) pool: PgPool,
    pub(crate) db_id: u64,
    pub(crate) channels: Vec<&'static str>,
}

impl Tx {
    /// A transaction of `db` on an SQLite connection begun by the caller (a queue that
    /// commits its writes in batches).
    pub fn sqlite(db: &Db, t: sqlx::Transaction<'static, sqlx::Sqlite>) -> Tx {
        Tx {
            conn: TxConn::Sqlite(t),
            clock: db.clock.clone(),
        }
    }

    /// The current time of the transaction's database ([`Db::now`]).
    pub fn now(&self) -> Ts {
        self.clock.now()
    }

    /// Which engine the transaction runs on.
    pub fn backend(&self) -> Backend {
        match self.conn {
            TxConn::Sqlite(_) => Backend::Sqlite,
            TxConn::Postgres(..) => Backend::Postgres,
        }
    }

    /// Has every node's listener of `channel` woken once this transaction has committed
    /// (PostgreSQL; on SQLite every write is made in this process, which wakes its own
    /// workers). The commit's one notification (see [`crate::notices`]) names it. The
    /// notification is sent after the commit, outside the transaction: a `NOTIFY` inside
    /// it would hold PostgreSQL's notification lock through the commit, so concurrent
    /// writers would commit one at a time. Notifications of concurrent commits are shared
    /// (one per round, see [`crate::coalesce`]).
    pub fn notify_after_commit(&mut self, channel: &'static str) {
        if let TxConn::Postgres(_, after) = &mut self.conn
            && !after.channels.contains(&channel)
        {
            after.channels.push(channel);
        }
    }

    pub async fn commit(self) -> DbResult<()> {
        match self.conn {
            TxConn::Sqlite(t) => t.commit().await?,
            TxConn::Postgres(t, after) => {
                t.commit().await?;
                announce_soon(after.pool, after.db_id, after.channels);
            }
        }
        writes::wrote();
        Ok(())
    }
}

/// After a commit on PostgreSQL: every node learns of it (see `Db::changes`) and wakes
/// what `channels` name, a moment after it: waiting for the notification would add a
/// round trip to every write.
pub(crate) fn announce_soon(pool: PgPool, db_id: u64, mut channels: Vec<&'static str>) {
    channels.sort_unstable();
    channels.dedup();
    tokio::spawn(async move { announce(&pool, db_id, channels.join(",")).await });
}

/// Notifies [`CHANGES`] with `topics` (comma-separated, see [`crate::notices`]), in a round that
/// starts after this call, shared with concurrent calls of the same topics; returns once
/// it is sent. A failure only delays the other nodes: their workers poll, and what they
/// reuse runs out (see [`crate::reuse`]).
pub(crate) async fn announce(pool: &PgPool, db_id: u64, topics: String) {
    type Notifier = crate::coalesce::Coalescer<(u64, String), ()>;
    static NOTIFIER: std::sync::LazyLock<Arc<Notifier>> = std::sync::LazyLock::new(Arc::default);
    let pool = pool.clone();
    NOTIFIER
        .get((db_id, topics), move |(_, topics), _| {
            let pool = pool.clone();
            async move {
                if let Err(e) = sqlx::query("SELECT pg_notify($1, $2)")
                    .bind(CHANGES)
                    .bind(&topics)
                    .execute(&pool)
                    .await
                {
                    tracing::debug!(error = ?e, topics, "notification not sent; listeners poll");
                }
            }
        })
        .await;
}
