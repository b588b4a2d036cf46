//! The one outbox worker. Webhook deliveries and mails are both rows written in the
//! transaction of the change that causes them and handed over by a worker: claimed with a
//! lease, delivered, recorded (sent, retried on a schedule, or failed), and released when
//! the worker stops. This module is that worker once; [`Outbox`] is what each use supplies.
//!
//! ```text
//! change's transaction --> outbox table --claim (lease)--> deliver --> record
//!                                  ^                                     |
//!                                  +------ retry at the scheduled time --+
//! ```
//!
//! The worker wakes when an item is written (in this process at once; on PostgreSQL through
//! `LISTEN/NOTIFY` from every node) and polls once a second as a fallback. Deliveries run
//! concurrently, bounded overall and per group (a webhook's subscription), so a slow target
//! only ever occupies its own slots. [`drain`] runs the same steps to completion, for tests
//! and tools.

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use jobboard_core::Clock;
use jobboard_store::{Db, Ts};
use tokio::{
    sync::{Notify, watch},
    task::JoinSet,
};
use uuid::Uuid;

/// Something the setup `S` of an outbox's use can be read from: the setup itself (each
/// use implements it for its own `Setup`), the running service's state, or a reference
/// to either.
pub trait HasSetup<S> {
    fn setup(&self) -> S;
}

impl<S, T: HasSetup<S> + ?Sized> HasSetup<S> for &T {
    fn setup(&self) -> S {
        (**self).setup()
    }
}

impl<S, T: HasSetup<S> + ?Sized> HasSetup<S> for Arc<T> {
    fn setup(&self) -> S {
        (**self).setup()
    }
}

/// Polling period when no wake-up arrives.
const POLL: Duration = Duration::from_secs(1);

/// One kind of outbox: how its items are claimed, delivered and handed back.
pub trait Outbox: Send + Sync + 'static {
    /// A claimed item, with whatever its delivery needs.
    type Item: Send + 'static;

    /// Names the outbox in the log ("webhook", "mail").
    const NAME: &'static str;

    /// The wake-up of this outbox in this process.
    fn wake(&self) -> &'static Notify;

    /// The PostgreSQL channel whose notifications wake every node's worker.
    fn channel(&self) -> &'static str;

    /// The item's id (what a lease is released by).
    fn id(item: &Self::Item) -> Uuid;

    /// The group the item counts against for the per-group bound (`None`: no group).
    fn group(_item: &Self::Item) -> Option<Uuid> {
        None
    }

    /// Runs once when the worker starts (webhooks on SQLite: void the leases of an
    /// earlier process).
    fn start(&self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Runs before claiming, after a wake-up and at least once per poll (webhooks: fan
    /// events out into deliveries).
    fn prepare(&self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Claims up to `limit` items due at `now`, at most `per_group` of one group; an
    /// error is logged and claims nothing.
    fn claim(
        &self,
        now: Ts,
        limit: usize,
        per_group: usize,
    ) -> impl Future<Output = Vec<Self::Item>> + Send;

    /// Delivers one claimed item and records the outcome, retries scheduled against
    /// `clock`.
    fn deliver(&self, item: Self::Item, clock: Clock) -> impl Future<Output = ()> + Send;

    /// Hands claimed items back (their leases end now).
    fn release(&self, ids: &[Uuid]) -> impl Future<Output = ()> + Send;

    /// When the next item falls due, if any.
    fn next_due(&self) -> impl Future<Output = Option<Ts>> + Send;
}

/// How much a worker runs at once, and how long it waits at shutdown.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Deliveries in flight at most.
    pub concurrency: usize,
    /// Deliveries of one group in flight at most.
    pub per_group: usize,
    /// Items claimed per round by [`drain`].
    pub drain_batch: usize,
    /// How long a shutdown waits for deliveries in flight before handing the rest back.
    pub grace: Duration,
}

/// Delivers every item due at `clock` until none is left; returns the deliveries tried.
/// Deterministic, no background task involved.
pub async fn drain<O: Outbox>(outbox: Arc<O>, limits: Limits, clock: Clock) -> usize {
    let mut tried = 0;
    loop {
        outbox.prepare().await;
        let claimed = outbox
            .claim(clock.now(), limits.drain_batch, usize::MAX >> 1)
            .await;
        if claimed.is_empty() {
            return tried;
        }
        tried += claimed.len();
        let mut set = JoinSet::new();
        for item in claimed {
            let (o, clock) = (outbox.clone(), clock.clone());
            set.spawn(async move { o.deliver(item, clock).await });
        }
        while set.join_next().await.is_some() {}
    }
}

/// The worker: delivers items of `db` due at its clock (the service's) until `stop`, then
/// hands unfinished ones back.
pub async fn run<O: Outbox>(
    outbox: Arc<O>,
    limits: Limits,
    db: &Db,
    mut stop: watch::Receiver<bool>,
) {
    let clock = db.clock().clone();
    outbox.start().await;
    db.listen(outbox.channel(), outbox.wake());
    let Limits {
        concurrency,
        per_group,
        ..
    } = limits;
    let freed = Arc::new(Notify::new());
    // Items in flight, by id, with their group.
    let in_flight: Arc<Mutex<HashMap<Uuid, Option<Uuid>>>> = Arc::default();
    // Claim in batches of at least this many free slots (unless idle), so that each
    // finished delivery does not cost a claim of its own.
    let batch_min = (concurrency / 8).clamp(1, 8);
    let mut tasks = JoinSet::new();
    // Whether new items may be waiting (at start, on a wake-up, on a poll).
    let mut woken_up = true;
    let mut last_prepare = Instant::now();
    loop {
        let woken = outbox.wake().notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        if *stop.borrow() {
            break;
        }
        while tasks.try_join_next().is_some() {}
        if std::mem::take(&mut woken_up) || last_prepare.elapsed() >= POLL {
            last_prepare = Instant::now();
            outbox.prepare().await;
        }
        let free = concurrency.saturating_sub(tasks.len());
        let mut claimed_n = 0;
        if free > 0 && (free >= batch_min || tasks.is_empty()) {
            let claimed = outbox.claim(clock.now(), free, per_group).await;
            claimed_n = claimed.len();
            let mut excess = Vec::new();
            {
                let mut map = in_flight.lock().unwrap_or_else(|e| e.into_inner());
                for item in claimed {
                    let (id, group) = (O::id(&item), O::group(&item));
                    if group.is_some() && map.values().filter(|g| **g == group).count() >= per_group
                    {
                        excess.push(id);
                        continue;
                    }
                    map.insert(id, group);
                    let (o, f, m) = (outbox.clone(), freed.clone(), in_flight.clone());
                    let clock = clock.clone();
                    tasks.spawn(async move {
                        o.deliver(item, clock).await;
                        m.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
                        f.notify_one();
                    });
                }
            }
            if !excess.is_empty() {
                outbox.release(&excess).await;
            }
        }
        let wait = if claimed_n > 0 && claimed_n == free {
            // A full batch: there may be more due right away.
            Duration::ZERO
        } else if !tasks.is_empty() {
            // A finishing delivery wakes the loop; poll as the fallback for retries.
            POLL
        } else {
            let now = clock.now();
            match outbox.next_due().await {
                Some(at) if at > now => {
                    Duration::from_micros((at.micros() - now.micros()).max(0) as u64).min(POLL)
                }
                _ => POLL,
            }
        };
        if wait.is_zero() && tasks.len() < concurrency {
            continue;
        }
        tokio::select! {
            _ = &mut woken => woken_up = true,
            _ = freed.notified() => {}
            _ = tokio::time::sleep(wait) => {}
            _ = stop.changed() => {}
        }
    }
    // Shutdown: give deliveries in flight a moment (each is bounded by its time-out), then
    // hand the rest back. An outcome already received is still recorded where the
    // delivery records it in a task of its own.
    let grace = tokio::time::sleep(limits.grace);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            next = tasks.join_next() => if next.is_none() { break },
            _ = &mut grace => break,
        }
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    let unfinished: Vec<Uuid> = in_flight
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .copied()
        .collect();
    if !unfinished.is_empty() {
        tracing::info!(
            outbox = O::NAME,
            count = unfinished.len(),
            "handing unfinished deliveries back"
        );
        outbox.release(&unfinished).await;
    }
}
