//! This node's search indexes ([`OrgIndex`]), one per organization that has been listed:
//! built from the database, kept in step with it through `job_changes` (migration 0028),
//! within a memory budget.
//!
//! Before a list is answered, its index reads the changes committed since the last it
//! applied (one small indexed statement; concurrent lists share one such read), so a list
//! always shows every write that committed before it began, from any node. On SQLite the
//! changes are read after the last change id applied; on PostgreSQL, where ids are not
//! committed in order, after the oldest transaction still running at the last read, and
//! changes already applied are recognised by id.
//!
//! An organization of up to [`BUILD_INLINE`] jobs is indexed by the list that first needs
//! it; a larger one in the background, its lists answered by SQL meanwhile. An index that
//! would not fit in the budget is not kept (SQL answers), and the least recently used
//! indexes of other organizations make room for a new one.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use futures_util::TryStreamExt;
use jobboard_search::index::{Build, Doc, Key, OrgIndex, Wear};
use sqlx::Connection;
use uuid::Uuid;

use super::{
    index::{self, DocRow, Found},
    model::ListFilter,
};
use crate::{
    Countries, OrgId, Ts,
    db::{Db, DbResult, Pool},
};

/// Organizations with at most this many jobs are indexed before their first list is
/// answered (about 50 ms of work); larger ones in the background.
pub(crate) const BUILD_INLINE: i64 = 20_000;

/// Default of the budget: bytes all of a node's search indexes may hold together.
pub const DEFAULT_BUDGET: usize = 160 << 20;

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
    /// Builds since the node started, by [`Cause`].
    builds: [AtomicU64; 3],
    /// Where [`follow`]'s next read of changes starts (their `at`).
    followed: Mutex<Option<Ts>>,
}

/// Why a node builds an organization's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The organization had no index on this node yet.
    First,
    /// Its index was dropped (to make room for others, or not kept up for hours) and is
    /// needed again.
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
    used: AtomicU64,
}

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
    bytes: AtomicUsize,
    since_measured: AtomicUsize,
    /// The organization's job list version read with the last changes applied (-1
    /// before the first read): a list that saw this version or an older one needs no
    /// read of changes.
    version: AtomicI64,
    /// A change brought a value the index cannot name: it is dropped.
    broken: AtomicBool,
}

/// Where an index's next change read starts.
#[derive(Debug, Clone)]
enum Mark {
    /// SQLite: the last change id applied.
    Sqlite(i64),
    /// PostgreSQL: the oldest transaction running at the last read, and the changes of
    /// transactions from it on that are already applied (by change id, with their
    /// transaction).
    Postgres {
        xmin: u64,
        applied: HashMap<i64, u64>,
    },
}

/// A change and, when the job still exists, its row (read in the same statement).
#[derive(Debug, sqlx::FromRow)]
struct ChangeRow {
    version: Option<i64>,
    xmin: Option<String>,
    change: Option<i64>,
    xid: Option<String>,
    job_id: Option<Uuid>,
    changed_created: Option<Ts>,
    text: Option<bool>,
    id: Option<Uuid>,
    created_at: Option<Ts>,
    status: Option<String>,
    is_sticky: Option<bool>,
    is_remote: Option<bool>,
    job_type: Option<String>,
    category_id: Option<Uuid>,
    location: Option<String>,
    country: Option<String>,
    remote_countries: Option<Countries>,
    salary_min: Option<f64>,
    salary_max: Option<f64>,
    expires_at: Option<Ts>,
    title: Option<String>,
    company_name: Option<String>,
    description_text: Option<String>,
}

impl ChangeRow {
    fn doc(&self) -> Option<Doc> {
        Some(Doc {
            id: self.id?,
            created_at: self.created_at?,
            status: self.status.clone()?,
            is_sticky: self.is_sticky?,
            is_remote: self.is_remote?,
            job_type: self.job_type.clone(),
            category_id: self.category_id,
            location: self.location.clone(),
            countries: index::countries_of(
                self.country.as_deref(),
                self.is_remote?,
                self.remote_countries.as_ref(),
            ),
            salary: index::salary_of(self.salary_min, self.salary_max),
            expires_at: self.expires_at,
            title: self.title.clone()?,
            company_name: self.company_name.clone()?,
            description_text: self.description_text.clone()?,
        })
    }
}

const CHANGE_COLUMNS: &str = "c.id AS change, c.job_id, c.created_at AS changed_created, \
    c.text, j.id, j.created_at, j.status, j.is_sticky, j.is_remote, j.job_type, \
    j.category_id, j.location, j.country, j.remote_countries, j.salary_min, j.salary_max, \
    j.expires_at, j.title, j.company_name, j.description_text";

impl Indexes {
    pub fn new(budget: usize) -> Indexes {
        Indexes {
            budget,
            slots: Mutex::new(HashMap::new()),
            tick: AtomicU64::new(0),
            builds: Default::default(),
            followed: Mutex::new(None),
        }
    }

    /// How many indexes this node has built since it started, by cause.
    pub fn builds(&self) -> [(Cause, u64); 3] {
        Cause::ALL.map(|c| (c, self.builds[c as usize].load(Ordering::Relaxed)))
    }

    /// The wear of the node's indexes: misplaced and forgotten jobs summed, the largest
    /// displacement.
    pub fn wear(&self) -> Wear {
        let lives: Vec<Arc<Live>> = {
            let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.values().filter_map(|s| s.live()).collect()
        };
        lives.iter().fold(Wear::default(), |all, l| {
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

    /// Bytes the indexes hold now, and how many organizations are indexed.
    pub fn usage(&self) -> (usize, usize) {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let lives: Vec<Arc<Live>> = slots.values().filter_map(|s| s.live()).collect();
        (
            lives.iter().map(|l| l.bytes.load(Ordering::Relaxed)).sum(),
            lives.len(),
        )
    }

    /// The organization's slot, marked as used now.
    fn slot(&self, org_id: OrgId) -> Arc<Slot> {
        let slot = self.entry(org_id);
        slot.used
            .store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        slot
    }

    /// The organization's slot, not marked as used (work that no list asked for).
    fn entry(&self, org_id: OrgId) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(org_id).or_default().clone()
    }

    /// Makes room for `need` bytes by dropping the least recently used indexes of other
    /// organizations; false when even that is not enough.
    fn make_room(&self, org_id: OrgId, need: usize) -> bool {
        if need > self.budget {
            return false;
        }
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let mut others: Vec<(u64, usize, &Arc<Slot>)> = slots
            .iter()
            .filter(|(id, _)| **id != org_id)
            .filter_map(|(_, s)| {
                s.live().map(|l| {
                    (
                        s.used.load(Ordering::Relaxed),
                        l.bytes.load(Ordering::Relaxed),
                        s,
                    )
                })
            })
            .collect();
        let mut total: usize = others.iter().map(|o| o.1).sum::<usize>() + need;
        others.sort_by_key(|o| o.0);
        for (_, bytes, slot) in others {
            if total <= self.budget {
                break;
            }
            *slot.ready.write().unwrap_or_else(|e| e.into_inner()) = None;
            total -= bytes;
        }
        true
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
    let _building = slot.build.lock().await;
    if let Some(l) = slot.live() {
        return Ok(Some(l));
    }
    build_into(db, indexes, slot, org_id, slot.missing()).await
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
        match build_into(&db, &indexes, &slot, org_id, cause).await {
            Ok(Some(live)) => tracing::info!(
                org_id = org_id.0,
                cause = cause.name(),
                jobs = live.index.read().unwrap_or_else(|e| e.into_inner()).len(),
                bytes = live.bytes.load(Ordering::Relaxed),
                ms = started.elapsed().as_millis() as u64,
                "search index built"
            ),
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
/// makes it the slot's.
async fn build_into(
    db: &Db,
    indexes: &Indexes,
    slot: &Slot,
    org_id: OrgId,
    cause: Cause,
) -> DbResult<Option<Arc<Live>>> {
    let Some((index, mark)) = build(db, org_id).await? else {
        slot.refused.store(true, Ordering::Relaxed);
        return Ok(None);
    };
    let bytes = index.heap_bytes();
    if !indexes.make_room(org_id, bytes) {
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
        bytes: AtomicUsize::new(bytes),
        since_measured: AtomicUsize::new(0),
        version: AtomicI64::new(-1),
        broken: AtomicBool::new(false),
    });
    live.catch_up(db, org_id, None).await?;
    slot.refused.store(false, Ordering::Relaxed);
    slot.built.store(true, Ordering::Relaxed);
    indexes.builds[cause as usize].fetch_add(1, Ordering::Relaxed);
    *slot.ready.write().unwrap_or_else(|e| e.into_inner()) = Some(live.clone());
    Ok(Some(live))
}

/// The organization's job count, from the counters.
async fn count_jobs(db: &Db, org_id: OrgId) -> DbResult<i64> {
    let sql = "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM job_counts WHERE org_id = $1";
    Ok(crate::dispatch!(db.reader(), p => {
        sqlx::query_scalar(sql).bind(org_id).fetch_one(p).await?
    }))
}

/// Reads every job of the organization in list order into a new index, with the mark
/// its change reads start from (one snapshot). `None` when the jobs cannot be indexed.
async fn build(db: &Db, org_id: OrgId) -> DbResult<Option<(OrgIndex, Mark)>> {
    let rows = format!(
        "SELECT {} FROM jobs j WHERE j.org_id = $1 ORDER BY j.created_at, j.id",
        DocRow::COLUMNS
    );
    let mut index = index::new_index();
    // Room for the jobs counted now and a few written while the build reads.
    let expected = count_jobs(db, org_id).await?.max(0) as usize;
    index.reserve(expected + expected / 64);
    let mut b = Build::default();
    let mut ok = true;
    // The rows, read through either backend's transaction into the index.
    macro_rules! read_rows {
        ($tx:ident) => {{
            let mut stream = sqlx::query_as::<_, DocRow>(sqlx::AssertSqlSafe(rows))
                .bind(org_id)
                .fetch(&mut *$tx);
            while let Some(row) = stream.try_next().await? {
                if ok && index.add_built(&Doc::from(row), &mut b).is_err() {
                    ok = false;
                }
            }
        }};
    }
    let mark = match db.reader() {
        Pool::Sqlite(pool) => {
            let mut conn = pool.acquire().await?;
            let mut tx = conn.begin().await?;
            let last: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM job_changes")
                .fetch_one(&mut *tx)
                .await?;
            read_rows!(tx);
            tx.commit().await?;
            Mark::Sqlite(last)
        }
        Pool::Postgres(pool) => {
            let mut tx = pool.begin().await?;
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .execute(&mut *tx)
                .await?;
            let xmin: String =
                sqlx::query_scalar("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")
                    .fetch_one(&mut *tx)
                    .await?;
            read_rows!(tx);
            // The changes from `xmin` on that this snapshot sees are in the rows read:
            // the first read of changes must not apply them again (a job indexed again
            // is misplaced).
            let seen: Vec<(i64, String)> = sqlx::query_as(
                "SELECT id, xid::text FROM job_changes WHERE org_id = $1 AND xid >= $2::text::xid8",
            )
            .bind(org_id)
            .bind(&xmin)
            .fetch_all(&mut *tx)
            .await?;
            tx.commit().await?;
            Mark::Postgres {
                xmin: xmin.parse().unwrap_or(0),
                applied: seen
                    .into_iter()
                    .map(|(id, xid)| (id, xid.parse().unwrap_or(0)))
                    .collect(),
            }
        }
    };
    if !ok {
        return Ok(None);
    }
    index.finish_build(b);
    Ok(Some((index, mark)))
}

impl Live {
    /// Applies every change committed before this call began (or, with `seen`, before
    /// the organization's job list version was `seen`).
    async fn catch_up(&self, db: &Db, org_id: OrgId, seen: Option<i64>) -> DbResult<()> {
        if seen.is_some_and(|v| self.version.load(Ordering::Acquire) >= v) {
            return Ok(());
        }
        // A read that starts after this point covers this call.
        let ticket = self.started.load(Ordering::Acquire) + 1;
        let _one = self.refresh.lock().await;
        if self.finished.load(Ordering::Acquire) >= ticket {
            return Ok(());
        }
        let n = self.started.fetch_add(1, Ordering::AcqRel) + 1;
        let mark = self.mark.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let rows: Vec<ChangeRow> = match (&mark, db.reader()) {
            (Mark::Sqlite(last), Pool::Sqlite(p)) => {
                let sql = format!(
                    "SELECT x.version, NULL AS xmin, NULL AS xid, {CHANGE_COLUMNS} \
                     FROM (SELECT {} AS version) x \
                     LEFT JOIN job_changes c ON c.org_id = $1 AND c.id > $2 \
                     LEFT JOIN jobs j ON j.id = c.job_id AND j.org_id = c.org_id \
                     ORDER BY c.id",
                    crate::job_list_version!("$1")
                );
                sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(org_id)
                    .bind(*last)
                    .fetch_all(p)
                    .await?
            }
            (Mark::Postgres { xmin, .. }, Pool::Postgres(p)) => {
                let sql = format!(
                    "SELECT s.version, s.xmin, c.xid::text AS xid, {CHANGE_COLUMNS} \
                     FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin, \
                     {} AS version) s \
                     LEFT JOIN job_changes c ON c.org_id = $1 AND c.xid >= $2::text::xid8 \
                     LEFT JOIN jobs j ON j.id = c.job_id AND j.org_id = c.org_id \
                     ORDER BY c.id",
                    crate::job_list_version!("$1")
                );
                sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(org_id)
                    .bind(xmin.to_string())
                    .fetch_all(p)
                    .await?
            }
            _ => Vec::new(),
        };
        let new_mark = self.apply(mark, &rows);
        *self.mark.lock().unwrap_or_else(|e| e.into_inner()) = new_mark;
        if let Some(v) = rows.first().and_then(|r| r.version) {
            self.version.fetch_max(v, Ordering::AcqRel);
        }
        *self.last_read.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.finished.store(n, Ordering::Release);
        Ok(())
    }

    /// Applies the changes of `rows` not applied before; returns the next mark.
    fn apply(&self, mark: Mark, rows: &[ChangeRow]) -> Mark {
        // Each job once, with whether any of its changes touched its words.
        let mut jobs: Vec<(Key, bool, Option<Doc>)> = Vec::new();
        let mut seen: HashMap<Key, usize> = HashMap::new();
        let mut mark = mark;
        for r in rows {
            let (Some(change), Some(job_id), Some(created)) =
                (r.change, r.job_id, r.changed_created)
            else {
                continue;
            };
            match &mut mark {
                Mark::Sqlite(last) => *last = (*last).max(change),
                Mark::Postgres { applied, .. } => {
                    let xid = r.xid.as_deref().and_then(|x| x.parse().ok()).unwrap_or(0);
                    if applied.insert(change, xid).is_some() {
                        continue;
                    }
                }
            }
            let key = (created.micros(), job_id);
            let text = r.text.unwrap_or(true);
            match seen.get(&key) {
                Some(&i) => jobs[i].1 |= text,
                None => {
                    seen.insert(key, jobs.len());
                    jobs.push((key, text, r.doc()));
                }
            }
        }
        if let Mark::Postgres { xmin, applied } = &mut mark
            && let Some(x) = rows
                .first()
                .and_then(|r| r.xmin.as_deref())
                .and_then(|x| x.parse().ok())
        {
            *xmin = x;
            applied.retain(|_, xid| *xid >= x);
        }
        if jobs.is_empty() {
            return mark;
        }
        let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
        for (key, text, doc) in &jobs {
            match doc {
                Some(d) if (d.created_at.micros(), d.id) == *key => {
                    if index.put(d, *text).is_err() {
                        self.broken.store(true, Ordering::Relaxed);
                    }
                }
                _ => index.remove(*key),
            }
        }
        let applied = self.since_measured.fetch_add(jobs.len(), Ordering::Relaxed) + jobs.len();
        if applied >= 1024 {
            self.since_measured.store(0, Ordering::Relaxed);
            self.bytes.store(index.heap_bytes(), Ordering::Relaxed);
        }
        mark
    }
}

/// Applies the changes waiting for every index of the node (a periodic step, so that an
/// index of an organization nobody lists for a while does not fall behind).
pub async fn keep_up(db: &Db) -> DbResult<()> {
    let indexes = Indexes::of(db);
    let lives: Vec<(OrgId, Arc<Live>)> = {
        let slots = indexes.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots
            .iter()
            .filter_map(|(org, s)| s.live().map(|l| (*org, l)))
            .collect()
    };
    for (org_id, live) in lives {
        live.catch_up(db, org_id, None).await?;
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
        let (used, _) = indexes.usage();
        // About 100 bytes a job for a typical description.
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
        if let Some(live) = build_into(db, &indexes, &slot, org_id, cause).await? {
            tracing::info!(
                org_id = org_id.0,
                cause = cause.name(),
                jobs = live.index.read().unwrap_or_else(|e| e.into_inner()).len(),
                bytes = live.bytes.load(Ordering::Relaxed),
                ms = started.elapsed().as_millis() as u64,
                "search index built"
            );
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
