//! Notifications from PostgreSQL (`LISTEN`) for the whole process, received on one
//! connection of its own, outside the pool.
//!
//! Every commit on PostgreSQL is followed by one notification on one channel,
//! [`CHANGES`] (see [`crate::Tx::commit`] and [`crate::Db::announce_change`]): its
//! payload names the topics the commit wakes (the outbox's, mail's, ...), comma-separated,
//! and may be empty. One channel, so that a commit costs one notification whatever it
//! wakes (each is a small transaction of its own, and PostgreSQL commits notifying
//! transactions one at a time).
//!
//! A `LISTEN` holds its connection for as long as it listens. Taken from the pool, each
//! listener would leave one connection fewer for requests and workers (and a pool as small
//! as the number of listeners would serve nothing). So [`Db::listen`](crate::Db::listen)
//! registers a topic and the waiters to wake, and one task per database listens and wakes
//! the waiters of each topic a notification names.
//!
//! The task also counts the notifications: [`Notices::changes`] gives the count, or
//! `None` while the channel is not listened to (before the first `LISTEN` has completed,
//! and from a lost connection until the next `LISTEN`), so that what was read while the
//! count stayed the same can be reused (see [`crate::reuse`]).
//!
//! When the connection is lost every waiter is woken (notifications sent meanwhile are
//! lost, so each looks for itself), and the task reconnects. It ends when the database
//! handle is closed or dropped.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, Once, Weak,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use tokio::sync::{Notify, watch};

/// The channel every commit notifies, with the topics it wakes as its payload.
pub const CHANGES: &str = "jobboard_changes";

/// The topics this process waits for, and whom each wakes; the count of changes.
#[derive(Debug)]
pub(crate) struct Notices {
    topics: Mutex<HashMap<&'static str, Vec<&'static Notify>>>,
    /// Notifications received, and connections lost or made: a number that moves
    /// whenever something may have changed unseen.
    changes: AtomicU64,
    /// [`CHANGES`] is listened to: every commit from now on is counted in `changes`.
    live: AtomicBool,
    /// Starts the listening task, once.
    started: Once,
    /// Sent when the database is closed; dropped with the last handle.
    closed: watch::Sender<bool>,
}

impl Default for Notices {
    fn default() -> Self {
        Notices {
            topics: Mutex::default(),
            changes: AtomicU64::new(0),
            live: AtomicBool::new(false),
            started: Once::new(),
            closed: watch::Sender::new(false),
        }
    }
}

impl Notices {
    /// Has `wake` woken on every notification naming `topic`, listening from now on (the
    /// first call, here or in [`Notices::start`], starts the task, on a connection made
    /// with `options`).
    pub(crate) fn listen(
        self: &Arc<Self>,
        options: &PgConnectOptions,
        topic: &'static str,
        wake: &'static Notify,
    ) {
        {
            let mut topics = self.topics.lock().unwrap();
            let waiters = topics.entry(topic).or_default();
            if !waiters.iter().any(|w| std::ptr::eq(*w, wake)) {
                waiters.push(wake);
            }
        }
        self.start(options);
    }

    /// The count of notifications (see the module's description), `None` while commits
    /// may go uncounted (the task not started yet among them: see [`Notices::start`]).
    pub(crate) fn changes(&self) -> Option<u64> {
        self.live
            .load(Ordering::Acquire)
            .then(|| self.changes.load(Ordering::Acquire))
    }

    /// Whether [`Notices::changes`] may still be `count`: read after the value it
    /// guards.
    pub(crate) fn unchanged(&self, count: u64) -> bool {
        self.live.load(Ordering::Acquire) && self.changes.load(Ordering::Acquire) == count
    }

    /// Starts the listening task, on a connection made with `options`, unless started.
    pub(crate) fn start(self: &Arc<Self>, options: &PgConnectOptions) {
        self.started.call_once(|| {
            tokio::spawn(receive(
                options.clone(),
                Arc::downgrade(self),
                self.closed.subscribe(),
            ));
        });
    }

    /// Ends the listening task.
    pub(crate) fn close(&self) {
        self.closed.send_replace(true);
    }

    /// A notification with `payload`: counted, and the waiters of each topic it names
    /// woken.
    fn received(&self, payload: &str) {
        self.changes.fetch_add(1, Ordering::AcqRel);
        if payload.is_empty() {
            return;
        }
        let topics = self.topics.lock().unwrap();
        for topic in payload.split(',') {
            if let Some(waiters) = topics.get(topic) {
                waiters.iter().for_each(|w| w.notify_waiters());
            }
        }
    }

    /// Now listening: changes are counted from here.
    fn listening(&self) {
        self.changes.fetch_add(1, Ordering::AcqRel);
        self.live.store(true, Ordering::Release);
    }

    /// The connection is lost: whatever was sent meanwhile is missed.
    fn lost(&self) {
        self.live.store(false, Ordering::Release);
        self.changes.fetch_add(1, Ordering::AcqRel);
        let topics = self.topics.lock().unwrap();
        topics.values().flatten().for_each(|w| w.notify_waiters());
    }
}

/// The listening task: one connection of its own.
async fn receive(
    options: PgConnectOptions,
    notices: Weak<Notices>,
    mut closed: watch::Receiver<bool>,
) {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_lazy_with(options);
    'connect: loop {
        let error = match PgListener::connect_with(&pool).await {
            Ok(mut listener) => match listener.listen(CHANGES).await {
                Err(e) => e,
                Ok(()) => {
                    let Some(n) = notices.upgrade() else {
                        break 'connect;
                    };
                    n.listening();
                    drop(n);
                    loop {
                        tokio::select! {
                            // `Ok(None)`: the connection was lost; a new listener connects
                            // and listens again (and counts from when it listens).
                            n = listener.try_recv() => match (n, notices.upgrade()) {
                                (_, None) => break 'connect,
                                (Ok(Some(n)), Some(notices)) => notices.received(n.payload()),
                                (Ok(None), Some(notices)) => {
                                    tracing::warn!("the notification connection was lost; reconnecting");
                                    notices.lost();
                                    continue 'connect;
                                }
                                (Err(e), Some(_)) => break e,
                            },
                            _ = closed.wait_for(|c| *c) => break 'connect,
                        }
                    }
                }
            },
            Err(e) => e,
        };
        tracing::warn!(error = ?error, "notifications not received; trying again in 5 s");
        if let Some(n) = notices.upgrade() {
            n.lost();
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(5)) => {}
            _ = closed.wait_for(|c| *c) => break,
        }
    }
    if let Some(n) = notices.upgrade() {
        n.live.store(false, Ordering::Release);
    }
    pool.close().await;
}
