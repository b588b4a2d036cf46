//! Notifications from PostgreSQL (`LISTEN`) for the whole process, received on one
//! connection of its own, outside the pool.
//!
//! A `LISTEN` holds its connection for as long as it listens. Taken from the pool, each
//! listener would leave one connection fewer for requests and workers (and a pool as small
//! as the number of listeners would serve nothing); one per listener would multiply the
//! server's connections. So [`Db::listen`](crate::Db::listen) registers a channel and the
//! waiters to wake, and one task per database listens on every registered channel.
//!
//! When the connection is lost every waiter is woken (notifications sent meanwhile are
//! lost, so each looks for itself), and the task reconnects. It ends when the database
//! handle is closed or dropped.
//!
//! One channel is the service's own: [`CHANGES`], which every commit notifies (see
//! [`crate::Tx::commit`] and [`crate::Db::announce_change`]). The task counts its
//! notifications; [`Notices::changes`] gives the count, or `None` while the channel is
//! not listened to (before the first `LISTEN` has completed, and from a lost connection
//! until the next `LISTEN`), so that what was read while the count stayed the same can be
//! reused (see [`crate::reuse`]).

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

/// The channel every commit notifies: something stored may have changed.
pub const CHANGES: &str = "jobboard_changes";

/// The channels this process listens on, and whom each wakes.
#[derive(Debug)]
pub(crate) struct Notices {
    channels: Mutex<HashMap<&'static str, Vec<&'static Notify>>>,
    /// Notifications received on [`CHANGES`], and connections lost or made: a number
    /// that moves whenever something may have changed unseen.
    changes: AtomicU64,
    /// [`CHANGES`] is listened to: every commit from now on is counted in `changes`.
    live: AtomicBool,
    /// Starts the listening task, once.
    started: Once,
    /// A channel was added (a permit is kept when the task is not waiting).
    added: Arc<Notify>,
    /// Sent when the database is closed; dropped with the last handle.
    closed: watch::Sender<bool>,
}

impl Default for Notices {
    fn default() -> Self {
        Notices {
            channels: Mutex::default(),
            changes: AtomicU64::new(0),
            live: AtomicBool::new(false),
            started: Once::new(),
            added: Arc::default(),
            closed: watch::Sender::new(false),
        }
    }
}

impl Notices {
    /// Has `wake` woken on every notification on `channel`, listening from now on (the
    /// first registration starts the task, on a connection made with `options`).
    pub(crate) fn listen(
        self: &Arc<Self>,
        options: &PgConnectOptions,
        channel: &'static str,
        wake: &'static Notify,
    ) {
        {
            let mut channels = self.channels.lock().unwrap();
            let waiters = channels.entry(channel).or_default();
            if waiters.iter().any(|w| std::ptr::eq(*w, wake)) {
                return;
            }
            waiters.push(wake);
        }
        self.added.notify_one();
        self.start(options);
    }

    /// The count of [`CHANGES`] (see the module's description), `None` while commits may
    /// go uncounted. The first call starts listening.
    pub(crate) fn changes(self: &Arc<Self>, options: &PgConnectOptions) -> Option<u64> {
        if self.live.load(Ordering::Acquire) {
            return Some(self.changes.load(Ordering::Acquire));
        }
        let added = {
            let mut channels = self.channels.lock().unwrap();
            channels.insert(CHANGES, Vec::new()).is_none()
        };
        if added {
            self.added.notify_one();
        }
        self.start(options);
        None
    }

    /// Whether [`Notices::changes`] may still be `count`: read after the value it
    /// guards.
    pub(crate) fn unchanged(&self, count: u64) -> bool {
        self.live.load(Ordering::Acquire) && self.changes.load(Ordering::Acquire) == count
    }

    /// Starts the listening task, on a connection made with `options`, unless started.
    fn start(self: &Arc<Self>, options: &PgConnectOptions) {
        self.started.call_once(|| {
            tokio::spawn(receive(
                options.clone(),
                Arc::downgrade(self),
                self.added.clone(),
                self.closed.subscribe(),
            ));
        });
    }

    /// Ends the listening task.
    pub(crate) fn close(&self) {
        self.closed.send_replace(true);
    }

    /// The channels not in `listening`.
    fn new_channels(&self, listening: &[&'static str]) -> Vec<&'static str> {
        let channels = self.channels.lock().unwrap();
        channels
            .keys()
            .filter(|c| !listening.contains(c))
            .copied()
            .collect()
    }

    fn wake(&self, channel: &str) {
        if channel == CHANGES {
            self.changes.fetch_add(1, Ordering::AcqRel);
        }
        if let Some(waiters) = self.channels.lock().unwrap().get(channel) {
            waiters.iter().for_each(|w| w.notify_waiters());
        }
    }

    /// Now listening on `channels`: changes are counted from here when one is [`CHANGES`].
    fn listening(&self, channels: &[&'static str]) {
        if channels.contains(&CHANGES) {
            self.changes.fetch_add(1, Ordering::AcqRel);
            self.live.store(true, Ordering::Release);
        }
    }

    /// The connection is lost: whatever was sent meanwhile is missed.
    fn lost(&self) {
        self.live.store(false, Ordering::Release);
        self.changes.fetch_add(1, Ordering::AcqRel);
        self.wake_all();
    }

    fn wake_all(&self) {
        let channels = self.channels.lock().unwrap();
        channels.values().flatten().for_each(|w| w.notify_waiters());
    }
}

/// The listening task: one connection of its own, every registered channel.
async fn receive(
    options: PgConnectOptions,
    notices: Weak<Notices>,
    added: Arc<Notify>,
    mut closed: watch::Receiver<bool>,
) {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_lazy_with(options);
    'connect: loop {
        let error = match PgListener::connect_with(&pool).await {
            Ok(mut listener) => {
                let mut listening = Vec::new();
                loop {
                    let Some(n) = notices.upgrade() else {
                        break 'connect;
                    };
                    let new = n.new_channels(&listening);
                    if !new.is_empty() {
                        if let Err(e) = listener.listen_all(new.iter().copied()).await {
                            break e;
                        }
                        n.listening(&new);
                        listening.extend(new);
                    }
                    drop(n);
                    tokio::select! {
                        // `Ok(None)`: the connection was lost; a new listener connects and
                        // listens again (and counts from when it listens).
                        n = listener.try_recv() => match (n, notices.upgrade()) {
                            (_, None) => break 'connect,
                            (Ok(Some(n)), Some(notices)) => notices.wake(n.channel()),
                            (Ok(None), Some(notices)) => {
                                tracing::warn!("the notification connection was lost; reconnecting");
                                notices.lost();
                                continue 'connect;
                            }
                            (Err(e), Some(_)) => break e,
                        },
                        _ = added.notified() => {}
                        _ = closed.wait_for(|c| *c) => break 'connect,
                    }
                }
            }
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
