//! This node's search indexes ([`OrgIndex`]), one per organization that has been listed
//! (or loaded in bulk): built from the database (`read.rs`), kept in step with it through
//! `job_changes` (migration 0028; `changes.rs`), within a memory budget.
//!
//! Before a list is answered, its index reads the changes committed since the last it
//! applied (one small indexed statement; concurrent lists share one such read), so a list
//! always shows every write that committed before it began, from any node. On SQLite the
//! changes are read after the last change id applied; on PostgreSQL, where ids are not
//! committed in order, after the oldest transaction still running at the last read, and
//! changes already applied are recognised by id.
//!
//! An organization of up to [`BUILD_INLINE`] jobs is indexed by the list that first needs
//! it; a larger one in the background, its lists answered by SQL meanwhile, or as soon as
//! this node sees it written to ([`follow`]), so a bulk load is indexed while it loads.
//! An index that would not fit in the budget is not kept (SQL answers). Indexes of other
//! organizations make room for a new one, the least used first (uses are counted, and
//! halved as they age), the least recently used among equals; a new index that would
//! push out one used more than its own organization answers the list that built it and
//! is not kept, so a board listed now and then does not push out one listed all day.
//! Indexes that grow as their boards do are measured as they grow, and held to the same
//! budget the same way (`budget.rs`): past it, the least used make room, the growing one
//! itself when every other is used more.

mod budget;
mod changes;
mod read;

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use jobboard_search::index::{OrgIndex, Wear};

use self::{
    budget::Room,
    changes::Mark,
    read::{build, count_jobs},
};
use super::{
    index::{self, Found},
    model::ListFilter,
};
use crate::{
    OrgId, Ts,
    db::{Db, DbResult},
};

/// Organizations with at most this many jobs are indexed before their first list is
/// answered (about 50 ms of work); larger ones in the background.
pub(crate) const BUILD_INLINE: i64 = 20_000;

/// Default of the budget: bytes all of a node's search indexes may hold together (the
/// server's `search_index_mb` when it is not set, and what other commands use).
pub const DEFAULT_BUDGET: usize = 128 << 20;

/// An index that has not read its changes for this long is built again: the scheduler
/// deletes changes older than a day ([`prune_changes`]).
const STALE_AFTER: Duration = Duration::from_secs(6 * 3600);

/// Changes are kept this long (microseconds).
const KEEP_CHANGES: i64 = 24 * 3600 * 1_000_000;

/// Every search index of a node.
pub struct Indexes {
    budget: usize,
    slots: Mutex<HashMap<OrgId, Arc<Slot>>>,
    /// A clock for least-recently-used eviction.
    tick: AtomicU64,
    /// Uses counted since the slots' uses were last halved.
    since_aging: AtomicU64,
    /// Builds since the node started, by [`Cause`].
    builds: [AtomicU64; 3],
    /// Where [`follow`]'s next read of changes starts (their `at`).
    followed: Mutex<Option<Ts>>,
    /// Bytes every index built here holds, as last measured, until it is dropped (also
    /// one no slot keeps, while a list still reads it): [`Live::measured`].
    held: Arc<AtomicUsize>,
}

/// Why a node builds an organization's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The organization had no index on this node yet.
    First,
    /// Its index was dropped (to make room for others, or not kept up for hours), or
    /// built for one list and not kept, and is needed again.
    Again,
    /// Its index had worn: many jobs indexed again or removed ([`Wear`]).
    Worn,
}

impl Cause {
    pub const ALL: [Cause; 3] = [Cause::First, Cause::Again, Cause::Worn];

    /// The name `/metrics` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Cause::First => "first",
            Cause::Again => "again",
            Cause::Worn => "worn",
        }
    }
}

/// One organization's place among the indexes.
#[derive(Default)]
struct Slot {
    ready: RwLock<Option<Arc<Live>>>,
    /// Held while the organization's index is being built.
    build: Arc<tokio::sync::Mutex<()>>,
    /// The last build did not fit the budget (or the index cannot name its values).
    refused: AtomicBool,
    /// An index of the organization was built on this node before.
    built: AtomicBool,
    /// When it was last used ([`Indexes::tick`]).
    used: AtomicU64,
    /// How often it was used, halved as uses age ([`Indexes::slot`]).
    uses: AtomicU64,
    /// Lists waiting for the build in progress: when there are any, the new index is
    /// kept whatever its use (each would otherwise build one again).
    waiting: AtomicUsize,
}

/// The slots' uses are halved after this many uses per slot in all.
const AGE_EVERY: u64 = 8;

/// A built index and what keeps it in step.
struct Live {
    index: RwLock<OrgIndex>,
    mark: Mutex<Mark>,
    /// One change read at a time; `started` and `finished` number them, so that a list
    /// waiting for the read in progress can use the next one instead of its own.
    refresh: tokio::sync::Mutex<()>,
    started: AtomicU64,
    finished: AtomicU64,
    last_read: Mutex<Instant>,
    /// What the index holds, as last measured; counted in the indexes' `held` too.
    bytes: AtomicUsize,
    held: Arc<AtomicUsize>,
    since_measured: AtomicUsize,
    /// The organization's job list version read with the last changes applied (-1
    /// before the first read): a list that saw this version or an older one needs no
    /// read of changes.
    version: AtomicI64,
    /// A change brought a value the index cannot name: it is dropped.
    broken: AtomicBool,
}

impl Indexes {
    pub fn new(budget: usize) -> Indexes {
        Indexes {
            budget,
            slots: Mutex::new(HashMap::new()),
            tick: AtomicU64::new(0),
            since_aging: AtomicU64::new(0),
            builds: Default::default(),
            followed: Mutex::new(None),
            held: Arc::default(),
        }
    }

    /// How many indexes this node has built since it started, by cause.
    pub fn builds(&self) -> [(Cause, u64); 3] {
        Cause::ALL.map(|c| (c, self.builds[c as usize].load(Ordering::Relaxed)))
    }

    /// The wear of the node's indexes: misplaced and forgotten jobs summed, the largest
    /// displacement.
    pub fn wear(&self) -> Wear {
        self.lives().iter().fold(Wear::default(), |all, (_, l)| {
            let w = l.index.read().unwrap_or_else(|e| e.into_inner()).wear();
            Wear {
                misplaced: all.misplaced + w.misplaced,
                forgotten: all.forgotten + w.forgotten,
                displacement: all.displacement.max(w.displacement),
            }
        })
    }

    /// The node's indexes of `db`.
    pub fn of(db: &Db) -> Arc<Indexes> {
        db.queue(|_| Indexes::new(DEFAULT_BUDGET))
    }

    /// The budget in bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The organizations indexed now, with their indexes.
    fn lives(&self) -> Vec<(OrgId, Arc<Live>)> {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots
            .iter()
            .filter_map(|(org, s)| s.live().map(|l| (*org, l)))
            .collect()
    }

    /// Bytes the indexes hold now, and how many organizations are indexed.
    pub fn usage(&self) -> (usize, usize) {
        let lives = self.lives();
        (
            lives
                .iter()
                .map(|(_, l)| l.bytes.load(Ordering::Relaxed))
                .sum(),
            lives.len(),
        )
    }

    /// The organization's slot, marked as used now (and its use counted). Every
    /// [`AGE_EVERY`] uses per slot, every slot's count is halved, so that what counts is
    /// recent use.
    fn slot(&self, org_id: OrgId) -> Arc<Slot> {
        let (slot, slots) = {
            let mut all = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            (all.entry(org_id).or_default().clone(), all.len() as u64)
        };
        slot.used
            .store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        slot.uses.fetch_add(1, Ordering::Relaxed);
        if self.since_aging.fetch_add(1, Ordering::Relaxed) + 1 >= AGE_EVERY * slots.max(8) {
            self.since_aging.store(0, Ordering::Relaxed);
            for s in self
                .slots
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .values()
            {
                let n = s.uses.load(Ordering::Relaxed);
                s.uses.store(n / 2, Ordering::Relaxed);
            }
        }
        slot
    }

    /// The organization's slot, not marked as used (work that no list asked for).
    fn entry(&self, org_id: OrgId) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(org_id).or_default().clone()
    }
}

impl Slot {
    fn live(&self) -> Option<Arc<Live>> {
        self.ready.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Why a build now would be made, when the slot has no index.
    fn missing(&self) -> Cause {
        if self.built.load(Ordering::Relaxed) {
            Cause::Again
        } else {
            Cause::First
        }
    }
}

/// A page of the list `f` and its exact total from the organization's index, or `None`
/// when it has none yet (being built, or larger than the budget). `seen`: the job list
/// version the request has already read, if any (no changes are read when the index has
/// applied that version).
pub(super) async fn find(
    db: &Db,
    org_id: OrgId,
    f: &ListFilter,
    (limit, offset): (i64, i64),
    now: Ts,
    seen: Option<i64>,
) -> DbResult<Option<Found>> {
    let indexes = Indexes::of(db);
    if indexes.budget == 0 {
        return Ok(None);
    }
    let slot = indexes.slot(org_id);
    let live = match slot.live() {
        Some(l)
            if l.last_read
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed()
                < STALE_AFTER =>
        {
            l
        }
        Some(_) => {
            *slot.ready.write().unwrap_or_else(|e| e.into_inner()) = None;
            return Ok(None);
        }
        None => match ensure(db, &indexes, &slot, org_id).await? {
            Some(l) => l,
            None => return Ok(None),
        },
    };
    live.catch_up(db, org_id, seen).await?;
    indexes.keep_within(org_id, &slot, &live);
    if live.broken.load(Ordering::Relaxed) {
        slot.refused.store(true, Ordering::Relaxed);
        *slot.ready.write().unwrap_or_else(|e| e.into_inner()) = None;
        return Ok(None);
    }
    let worn = live.index.read().unwrap_or_else(|e| e.into_inner()).worn();
    if worn {
        rebuild_in_background(db, &indexes, &slot, org_id, Cause::Worn);
    }
    let found = index::find(
        &live.index.read().unwrap_or_else(|e| e.into_inner()),
        f,
        limit,
        offset,
        now,
    );
    Ok(Some(found))
}

/// Logs a build made in the background or at start (`started` when it began).
fn log_built(org_id: OrgId, cause: Cause, live: &Live, started: Instant) {
    tracing::info!(
        org_id = org_id.0,
        cause = cause.name(),
        jobs = live.index.read().unwrap_or_else(|e| e.into_inner()).len(),
        bytes = live.bytes.load(Ordering::Relaxed),
        ms = started.elapsed().as_millis() as u64,
        "search index built"
    );
}

/// The organization's index, built now when it is small; `None` while a large one is
/// built in the background, or when it does not fit.
async fn ensure(
    db: &Db,
    indexes: &Arc<Indexes>,
    slot: &Arc<Slot>,
    org_id: OrgId,
) -> DbResult<Option<Arc<Live>>> {
    if slot.refused.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let jobs = count_jobs(db, org_id).await?;
    if jobs > BUILD_INLINE {
        rebuild_in_background(db, indexes, slot, org_id, slot.missing());
        return Ok(None);
    }
    slot.waiting.fetch_add(1, Ordering::Relaxed);
    let _building = slot.build.lock().await;
    slot.waiting.fetch_sub(1, Ordering::Relaxed);
    if let Some(l) = slot.live() {
        return Ok(Some(l));
    }
    build_into(db, indexes, slot, org_id, slot.missing(), false).await
}

/// Starts a build of the organization's index unless one is running; the current index
/// (if any) answers until the new one is ready.
fn rebuild_in_background(
    db: &Db,
    indexes: &Arc<Indexes>,
    slot: &Arc<Slot>,
    org_id: OrgId,
    cause: Cause,
) {
    let Ok(guard) = slot.build.clone().try_lock_owned() else {
        return;
    };
    let (db, indexes, slot) = (db.clone(), indexes.clone(), slot.clone());
    tokio::spawn(async move {
        let _building = guard;
        let started = Instant::now();
        match build_into(&db, &indexes, &slot, org_id, cause, true).await {
            Ok(Some(live)) => log_built(org_id, cause, &live, started),
            Ok(None) => {
                tracing::info!(
                    org_id = org_id.0,
                    "search index larger than its budget: lists use SQL"
                )
            }
            Err(e) => tracing::warn!(org_id = org_id.0, error = ?e, "search index build failed"),
        }
    });
}

/// Builds the organization's index (counted under `cause`), brings it up to date and
/// makes it the slot's. Unless `always` or other lists wait for it, an index that would
/// push out one used more ([`Room::NotNow`]) is answered but not kept.
async fn build_into(
    db: &Db,
    indexes: &Indexes,
    slot: &Slot,
    org_id: OrgId,
    cause: Cause,
    always: bool,
) -> DbResult<Option<Arc<Live>>> {
    let Some((index, mark)) = build(db, org_id).await? else {
        slot.refused.store(true, Ordering::Relaxed);
        return Ok(None);
    };
    let bytes = index.heap_bytes();
    let busy = slot.waiting.load(Ordering::Relaxed) > 0;
    let room = indexes.make_room(org_id, bytes, always || busy);
    if room == Room::TooLarge {
        slot.refused.store(true, Ordering::Relaxed);
        return Ok(None);
    }
    let live = Arc::new(Live {
        index: RwLock::new(index),
        mark: Mutex::new(mark),
        refresh: tokio::sync::Mutex::new(()),
        started: AtomicU64::new(0),
        finished: AtomicU64::new(0),
        last_read: Mutex::new(Instant::now()),
        bytes: AtomicUsize::new(0),
        held: indexes.held.clone(),
        since_measured: AtomicUsize::new(0),
        version: AtomicI64::new(-1),
        broken: AtomicBool::new(false),
    });
    live.measured(bytes);
    live.catch_up(db, org_id, None).await?;
    slot.refused.store(false, Ordering::Relaxed);
    slot.built.store(true, Ordering::Relaxed);
    indexes.builds[cause as usize].fetch_add(1, Ordering::Relaxed);
    if room == Room::Kept {
        *slot.ready.write().unwrap_or_else(|e| e.into_inner()) = Some(live.clone());
    }
    Ok(Some(live))
}

/// Applies the changes waiting for every index of the node (a periodic step, so that an
/// index of an organization nobody lists for a while does not fall behind).
pub async fn keep_up(db: &Db) -> DbResult<()> {
    let indexes = Indexes::of(db);
    for (org_id, live) in indexes.lives() {
        live.catch_up(db, org_id, None).await?;
        indexes.keep_within(org_id, &indexes.entry(org_id), &live);
    }
    Ok(())
}

/// How far back [`follow`] reads changes again: a write stamps its changes when it
/// makes them and may commit a little later (microseconds).
const FOLLOW_MARGIN: i64 = 10_000_000;

/// Follows the writes of the last seconds (a periodic step, every second): the index of
/// each organization written to applies its changes, so the next list has little or
/// nothing to read; and an organization written to that has no index here and has grown
/// past what a first list builds at once ([`BUILD_INLINE`]) is built in the background.
/// A board loaded in bulk, through the API or an import, with no list meanwhile, is then
/// indexed while it loads, and its first list answered from memory. What a list shows
/// does not depend on this step: a list always applies every change committed before it.
pub async fn follow(db: &Db) -> DbResult<()> {
    let indexes = Indexes::of(db);
    if indexes.budget == 0 {
        return Ok(());
    }
    let since = indexes
        .followed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or_else(|| Ts::from_micros(db.now().micros() - FOLLOW_MARGIN));
    let sql = "SELECT org_id, MAX(at) FROM job_changes WHERE at >= $1 GROUP BY org_id";
    let written: Vec<(OrgId, Ts)> = crate::dispatch!(db.reader(), p => {
        sqlx::query_as(sql).bind(since).fetch_all(p).await?
    });
    if let Some(latest) = written.iter().map(|w| w.1.micros()).max() {
        let next = Ts::from_micros((latest - FOLLOW_MARGIN).max(since.micros()));
        *indexes.followed.lock().unwrap_or_else(|e| e.into_inner()) = Some(next);
    }
    for (org_id, _) in written {
        let slot = indexes.entry(org_id);
        if let Some(live) = slot.live() {
            live.catch_up(db, org_id, None).await?;
            indexes.keep_within(org_id, &slot, &live);
        } else if !slot.refused.load(Ordering::Relaxed)
            && slot.build.try_lock().is_ok()
            && count_jobs(db, org_id).await? > BUILD_INLINE
        {
            rebuild_in_background(db, &indexes, &slot, org_id, slot.missing());
        }
    }
    Ok(())
}

/// Builds the indexes of the organizations with the most jobs, one after another, while
/// the budget lasts (a node's start: its first lists are then answered from memory).
pub async fn warm(db: &Db) -> DbResult<()> {
    let indexes = Indexes::of(db);
    if indexes.budget == 0 {
        return Ok(());
    }
    let sql = "SELECT org_id, CAST(SUM(n) AS BIGINT) AS jobs FROM job_counts \
        GROUP BY org_id HAVING SUM(n) > 0 ORDER BY jobs DESC, org_id LIMIT 1000";
    let orgs: Vec<(OrgId, i64)> = crate::dispatch!(db.reader(), p => {
        sqlx::query_as(sql).fetch_all(p).await?
    });
    for (org_id, jobs) in orgs {
        // What the indexes hold (kept as they are measured, not summed over them), and
        // about 100 bytes a job for a typical description.
        let used = indexes.held.load(Ordering::Relaxed);
        if used.saturating_add(
            usize::try_from(jobs)
                .unwrap_or(usize::MAX)
                .saturating_mul(100),
        ) > indexes.budget
        {
            continue;
        }
        let slot = indexes.slot(org_id);
        let _building = slot.build.lock().await;
        if slot.live().is_some() || slot.refused.load(Ordering::Relaxed) {
            continue;
        }
        let started = Instant::now();
        let cause = slot.missing();
        if let Some(live) = build_into(db, &indexes, &slot, org_id, cause, true).await? {
            log_built(org_id, cause, &live, started);
        }
    }
    Ok(())
}

/// Deletes changes older than a day (a step of the scheduler, every minute); returns how
/// many.
pub async fn prune_changes(db: &Db, now: Ts) -> DbResult<u64> {
    let before = Ts::from_micros(now.micros() - KEEP_CHANGES);
    Ok(crate::dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM job_changes WHERE at < $1")
            .bind(before)
            .execute(p)
            .await?
            .rows_affected()
    }))
}
