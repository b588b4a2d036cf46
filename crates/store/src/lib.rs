//! Storage: one `Db` handle over SQLite or PostgreSQL, chosen once from the URL scheme.
//!
//! Queries are written once with `$N` placeholders (both engines accept them) and run on
//! either backend through [`dispatch!`], which expands the same code for each concrete
//! pool type, so both backends use native types and static dispatch. Where the SQL
//! dialects differ, the code branches on [`Db::backend`].
//!
//! Every connection keeps the statements it prepared (sqlx's cache, 100 a connection) for
//! as long as it lives. A statement whose text grows with a list (a multi-row `VALUES`, an
//! `IN (...)` of ids) is a new statement for every length, so it is run with
//! `.persistent(false)`: kept, each length would stay prepared on every connection that
//! ran it, memory that rises for hours while the cache fills and is seldom used again.

pub mod backup;
pub mod coalesce;
mod error;
pub mod events;
mod migrate;
mod notices;
pub mod outbox;
pub mod ratelimit;
pub mod reuse;
pub mod secrets;
pub mod transfer;
mod tx;
mod writes;

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    str::FromStr,
    sync::{Arc, Mutex},
    time::Duration,
};

use sqlx::{
    PgPool, SqlitePool,
    postgres::{PgConnectOptions, PgPoolOptions},
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
};

pub use error::{DbResult, StoreError};
pub use jobboard_core::{Clock, OrgId, Ts};
pub use notices::CHANGES;
pub use tx::{AfterCommit, Tx, TxConn};
pub use writes::{Writer, committed_writes};

/// Which engine a [`Db`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A connection pool of one of the two engines.
#[derive(Clone, Debug)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Pool {
    /// How many statements the pool's connections keep prepared, in all, or `None` while
    /// one of them is in use (its statements cannot be counted). Each idle connection is
    /// taken in turn and held until all are counted, so none is counted twice.
    pub fn prepared_statements(&self) -> Option<usize> {
        use sqlx::Connection;
        dispatch!(self, p => {
            let mut held = Vec::new();
            let mut kept = 0;
            while let Some(c) = p.try_acquire() {
                kept += c.cached_statements_size();
                held.push(c);
            }
            (held.len() == p.size() as usize).then_some(kept)
        })
    }
}

/// Runs `$body` with `$p` bound to the concrete pool (`&SqlitePool` or `&PgPool`).
/// The body is compiled once per backend.
#[macro_export]
macro_rules! dispatch {
    ($pool:expr, $p:ident => $body:expr) => {
        match &*$pool {
            $crate::Pool::Sqlite($p) => $body,
            $crate::Pool::Postgres($p) => $body,
        }
    };
}

/// Runs `$body` with `$t` bound to the concrete open transaction
/// (`&mut Transaction<Sqlite>` or `&mut Transaction<Postgres>`); use `&mut **$t` as executor.
#[macro_export]
macro_rules! dispatch_tx {
    ($tx:expr, $t:ident => $body:expr) => {
        match &mut ($tx).conn {
            $crate::TxConn::Sqlite($t) => $body,
            $crate::TxConn::Postgres($t, _) => $body,
        }
    };
}

/// The write queues of one database, by type.
#[derive(Default)]
pub struct Queues(Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>);

impl std::fmt::Debug for Queues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queues")
    }
}

/// The storage handle. On SQLite, writes go through a single-connection pool so that
/// write transactions queue in process instead of failing with `SQLITE_BUSY`; reads
/// use a pool of their own. On PostgreSQL both are the same pool.
#[derive(Clone, Debug)]
pub struct Db {
    read: Pool,
    write: Pool,
    backend: Backend,
    /// Queues of writes that one task commits in batches (see [`Db::queue`]).
    queues: std::sync::Arc<Queues>,
    /// Set when mail is sent (see [`Db::set_outgoing`]).
    outgoing: std::sync::Arc<std::sync::OnceLock<Outgoing>>,
    /// Tells this database apart from others of the same process (see [`Db::id`]).
    id: u64,
    /// Bytes all of this process's SQLite page caches of the database may hold together
    /// (0 on PostgreSQL, whose caches are the server's).
    page_cache_budget: u64,
    /// The shared lock on an SQLite file's `-lock` file, held while any handle is open
    /// (see [`backup`]: a restore waits for none and refuses while it is held).
    _file_lock: Option<std::sync::Arc<std::fs::File>>,
    /// The time every operation on this database reads ([`Db::now`]): the system's, or
    /// the one the service gives its workers and scheduler too (see [`Db::with_clock`]).
    clock: Clock,
    /// What this process listens for (PostgreSQL; see [`Db::listen`]).
    notices: Arc<notices::Notices>,
}

/// Default of [`Db::connect_with`]'s page cache budget: 8 MiB over all connections.
pub const PAGE_CACHE_BUDGET: u64 = 8 << 20;

/// The next [`Db::id`].
static NEXT_DB_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_db_id() -> u64 {
    NEXT_DB_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// What writes that queue mail need to know: that mail is sent at all, and where the
/// links in it point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The service's own address (`public_url`, else the listen address), no trailing
    /// slash: the dashboard's links, and the board's of organizations without a domain.
    pub base_url: String,
    /// The scheme of links to an organization's own domain (`https` unless `public_url`
    /// is plain `http`).
    pub domain_scheme: String,
}

impl Outgoing {
    /// The absolute address of `path` on the board of an organization with `domain`.
    pub fn board_url(&self, domain: Option<&str>, path: &str) -> String {
        match domain {
            Some(d) => format!("{}://{d}{path}", self.domain_scheme),
            None => format!("{}{path}", self.base_url),
        }
    }
}

/// SQLite's `synchronous` setting (see docs/durability.md). In WAL mode `Normal` syncs
/// at checkpoints only: the database stays consistent on power loss, but the last commits
/// may be lost; `Full` syncs the log on every commit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Synchronous {
    #[default]
    Normal,
    Full,
}

impl Db {
    /// Connects to `url` (`sqlite://path`, `sqlite::memory:`, or `postgres://...`),
    /// creating an SQLite file if it is missing.
    pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<Db> {
        Db::connect_with(
            url,
            max_connections,
            Synchronous::default(),
            PAGE_CACHE_BUDGET,
        )
        .await
    }

    /// [`Db::connect`] with SQLite's `synchronous` setting chosen (ignored on PostgreSQL,
    /// whose durability is the server's `fsync` and `synchronous_commit`) and the bytes
    /// all SQLite page caches may hold together, shared out evenly between the writer
    /// and the readers (ignored on PostgreSQL).
    pub async fn connect_with(
        url: &str,
        max_connections: u32,
        synchronous: Synchronous,
        page_cache_budget: u64,
    ) -> anyhow::Result<Db> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let opts = PgConnectOptions::from_str(url)?.application_name("jobboard");
            let pool = PgPoolOptions::new()
                .max_connections(max_connections.max(2))
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(opts)
                .await?;
            let pool = Pool::Postgres(pool);
            Ok(Db {
                read: pool.clone(),
                write: pool,
                backend: Backend::Postgres,
                queues: Default::default(),
                outgoing: Default::default(),
                id: next_db_id(),
                page_cache_budget: 0,
                _file_lock: None,
                clock: Clock::system(),
                notices: Default::default(),
            })
        } else if url.starts_with("sqlite:") {
            let readers = max_connections.max(1);
            // Each connection has its own cache: the writer's and every reader's share.
            let per_connection_kib = (page_cache_budget / 1024 / (u64::from(readers) + 1)).max(128);
            let opts = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(match synchronous {
                    Synchronous::Normal => SqliteSynchronous::Normal,
                    Synchronous::Full => SqliteSynchronous::Full,
                })
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(10))
                .pragma("temp_store", "memory")
                .pragma("cache_size", format!("-{per_connection_kib}"));
            let memory = url.contains(":memory:") || url.contains("mode=memory");
            let file_lock = if memory {
                None
            } else {
                backup::hold_shared(opts.get_filename())?.map(std::sync::Arc::new)
            };
            let write = SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(opts.clone())
                .await?;
            // An in-memory database exists once per connection: share the one writer.
            let read = if memory {
                write.clone()
            } else {
                SqlitePoolOptions::new()
                    .max_connections(readers)
                    .idle_timeout(None)
                    .max_lifetime(None)
                    .connect_with(opts.read_only(true))
                    .await?
            };
            Ok(Db {
                read: Pool::Sqlite(read),
                write: Pool::Sqlite(write),
                backend: Backend::Sqlite,
                queues: Default::default(),
                outgoing: Default::default(),
                id: next_db_id(),
                page_cache_budget: per_connection_kib * 1024 * (u64::from(readers) + 1),
                _file_lock: file_lock,
                clock: Clock::system(),
                notices: Default::default(),
            })
        } else {
            anyhow::bail!(
                "unsupported database URL scheme (expected sqlite:// or postgres://): {}",
                redact_url(url)
            )
        }
    }

    /// The queue of type `T` of this database, made by `init` on first use. Resources keep
    /// their write batching here (on SQLite, job creations committed together), so a
    /// queue lives exactly as long as the handles of its database.
    pub fn queue<T: Any + Send + Sync>(&self, init: impl FnOnce(&Db) -> T) -> Arc<T> {
        let mut map = self.queues.0.lock().unwrap_or_else(|e| e.into_inner());
        let entry = map
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(init(self)) as Arc<dyn Any + Send + Sync>);
        Arc::clone(entry)
            .downcast::<T>()
            .expect("a queue is stored under its own type")
    }

    /// The next batch of a queue's task: waits for one item, then takes what else is
    /// waiting, up to `max` in all (no added delay: a batch is what queued while the
    /// previous one was being written). `None` once the queue is closed and empty.
    pub async fn next_batch<T>(
        rx: &mut tokio::sync::mpsc::UnboundedReceiver<T>,
        max: usize,
    ) -> Option<Vec<T>> {
        let first = rx.recv().await?;
        let mut batch = vec![first];
        while batch.len() < max {
            match rx.try_recv() {
                Ok(item) => batch.push(item),
                Err(_) => break,
            }
        }
        Some(batch)
    }

    /// The same database without its queues (for the task that drains one: it must not
    /// keep the queue alive).
    pub fn without_queues(&self) -> Db {
        Db {
            read: self.read.clone(),
            write: self.write.clone(),
            backend: self.backend,
            queues: Default::default(),
            outgoing: self.outgoing.clone(),
            id: self.id,
            page_cache_budget: self.page_cache_budget,
            _file_lock: self._file_lock.clone(),
            clock: self.clock.clone(),
            notices: self.notices.clone(),
        }
    }

    /// The same database with its time read from `clock`: every operation's "now"
    /// (expiry, schedules, stamps) is then `clock`'s, so moving it (tests) moves every
    /// rule at once.
    pub fn with_clock(mut self, clock: Clock) -> Db {
        self.clock = clock;
        self
    }

    /// The clock of [`Db::now`].
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The current time, as every operation on this database reads it.
    pub fn now(&self) -> Ts {
        self.clock.now()
    }

    /// A number that tells this database apart from the others a process has connected
    /// to (the same for its clones): what keys in-process caches of its data.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The bytes this process's page caches of the database may hold together (SQLite;
    /// 0 on PostgreSQL).
    pub fn page_cache_budget(&self) -> u64 {
        self.page_cache_budget
    }

    /// Declares that mail is sent, and where its links point: writes that have mail to
    /// send (to employers, to alert subscribers) queue it from now on. Without it they
    /// queue none. Set once, when the service starts.
    pub fn set_outgoing(&self, o: Outgoing) {
        let _ = self.outgoing.set(o);
    }

    /// The mail settings of [`Db::set_outgoing`], when mail is sent.
    pub fn outgoing(&self) -> Option<&Outgoing> {
        self.outgoing.get()
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Pool for reads.
    pub fn reader(&self) -> &Pool {
        &self.read
    }

    /// Pool for writes and transactions. What is written through it while the returned
    /// handle lives counts as committed once it is dropped (see [`committed_writes`]).
    pub fn writer(&self) -> Writer<'_> {
        Writer(&self.write)
    }

    /// The PostgreSQL pool, when this is a PostgreSQL database.
    pub fn pg(&self) -> Option<&PgPool> {
        match &self.write {
            Pool::Postgres(p) => Some(p),
            Pool::Sqlite(_) => None,
        }
    }

    /// Begins a write transaction. On SQLite it takes the write lock at once
    /// (`BEGIN IMMEDIATE`), so it never fails half-way on a lock upgrade.
    pub async fn begin(&self) -> DbResult<Tx> {
        let conn = match &self.write {
            Pool::Sqlite(p) => TxConn::Sqlite(p.begin_with("BEGIN IMMEDIATE").await?),
            Pool::Postgres(p) => TxConn::Postgres(
                p.begin().await?,
                AfterCommit {
                    pool: p.clone(),
                    db_id: self.id,
                    channels: Vec::new(),
                },
            ),
        };
        Ok(Tx {
            conn,
            clock: self.clock.clone(),
        })
    }

    /// Applies pending migrations of this backend.
    pub async fn migrate(&self) -> anyhow::Result<Vec<String>> {
        migrate::run(self).await
    }

    /// True when the database answers and every migration is applied.
    pub async fn ready(&self) -> bool {
        migrate::is_current(self).await.unwrap_or(false)
    }

    /// Wakes `wake`'s waiters whenever a commit on any node names `channel` (see
    /// [`Tx::notify_after_commit`]), and all of them when notifications may have been
    /// missed (the connection that receives them was lost). On PostgreSQL only: on SQLite
    /// every write is made in this process, which wakes its own waiters. The process
    /// receives every notification on one connection of its own, outside the pool.
    pub fn listen(&self, channel: &'static str, wake: &'static tokio::sync::Notify) {
        if let Pool::Postgres(p) = &self.write {
            self.notices.listen(&p.connect_options(), channel, wake);
        }
    }

    /// On PostgreSQL, tells every node that something may have changed (notifies
    /// [`CHANGES`]) and returns once the notification is sent: after a write made through
    /// [`Db::writer`] to what nodes reuse (see [`reuse`]), and before a process that wrote
    /// ends (a [`Tx`] sends it when it commits, without waiting). Nothing on SQLite, where
    /// the write itself is counted ([`committed_writes`]).
    pub async fn announce_change(&self) {
        if let Pool::Postgres(p) = &self.write {
            tx::announce(p, self.id, String::new()).await;
        }
    }

    /// After a write through [`Db::writer`] that committed on its own (one statement,
    /// no [`Tx`]): on PostgreSQL, has every node's listener of `channels` woken, as a
    /// [`Tx`]'s commit does ([`Tx::notify_after_commit`]), a moment after this call
    /// without waiting for it. Nothing on SQLite, where this process's waiters are all.
    pub fn announce_commit(&self, channels: &[&'static str]) {
        if let Pool::Postgres(p) = &self.write {
            tx::announce_soon(p.clone(), self.id, channels.to_vec());
        }
    }

    /// The count of changes this node has been told of ([`CHANGES`]), on
    /// PostgreSQL: what was read while it stayed the same (and this process committed
    /// nothing, [`committed_writes`]) is current. `None` while commits may go uncounted
    /// (the first call starts listening; a lost connection, until it listens again).
    /// Always `Some` on SQLite, where only this process's commits count.
    pub fn changes(&self) -> Option<u64> {
        match &self.write {
            Pool::Postgres(p) => {
                let count = self.notices.changes();
                if count.is_none() {
                    // Only until the node listens: the options are not built per call.
                    self.notices.start(&p.connect_options());
                }
                count
            }
            Pool::Sqlite(_) => Some(0),
        }
    }

    /// Whether [`Db::changes`] may still be `count` (read after what it guards).
    pub fn unchanged(&self, count: u64) -> bool {
        match &self.write {
            Pool::Postgres(_) => self.notices.unchanged(count),
            Pool::Sqlite(_) => true,
        }
    }

    pub async fn close(&self) {
        self.notices.close();
        dispatch!(&self.read, p => p.close().await);
        dispatch!(&self.write, p => p.close().await);
    }
}

/// Hides the password of a database URL for logs and errors.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &creds[..c], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// Stores one row in `$tx` with one statement: each column named once beside the value
/// bound to it (see [`upsert_statement`]); the columns after `keep` are written on insert
/// only. When `$new` is true the row is inserted and a row already stored under the
/// `conflict` key is a unique violation (so concurrent creations are told apart);
/// otherwise the stored row is updated.
///
/// ```ignore
/// save_row!(tx, "members", new created, conflict "org_id, id", keep [id, org_id, created_at], {
///     id: m.id, org_id: m.organization_id, email: &m.email, ...
/// });
/// ```
#[macro_export]
macro_rules! save_row {
    ($tx:expr, $table:literal, new $new:expr, conflict $conflict:literal, keep [$($kept:ident),*], {
        $($col:ident : $value:expr),+ $(,)?
    }) => {{
        let sql = $crate::upsert_statement(
            $table,
            (!$new).then_some($conflict),
            &[$(stringify!($col)),+],
            &[$(stringify!($kept)),*],
        );
        $crate::dispatch_tx!($tx, t => {
            sqlx::query(sqlx::AssertSqlSafe(sql))
                $(.bind($value))+
                .execute(&mut **t)
                .await
                .map(|_| ())
                .map_err($crate::StoreError::from)
        })
    }};
}

/// `INSERT INTO table (columns) VALUES ($1, ...)`, and with a `conflict` key `ON CONFLICT
/// (conflict) DO UPDATE SET` every column but those of `kept` to its new value: one column
/// list for the insert and the update of a row.
pub fn upsert_statement(
    table: &str,
    conflict: Option<&str>,
    columns: &[&str],
    kept: &[&str],
) -> String {
    let marks: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
    let sets: Vec<String> = columns
        .iter()
        .filter(|c| !kept.contains(c))
        .map(|c| format!("{c} = excluded.{c}"))
        .collect();
    let insert = format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        columns.join(", "),
        marks.join(", ")
    );
    match conflict {
        Some(key) => format!(
            "{insert} ON CONFLICT ({key}) DO UPDATE SET {}",
            sets.join(", ")
        ),
        None => insert,
    }
}

/// Appends ` IN ($a, $b, ...)` binding `ids` (which must not be empty).
/// The statement's text then depends on the list's length: run it with
/// `.persistent(false)` (see the crate's documentation).
pub fn push_in_list<DB, I>(qb: &mut sqlx::QueryBuilder<DB>, ids: &[I])
where
    DB: sqlx::Database,
    I: Copy,
    for<'t> I: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    qb.push(" IN (");
    let mut sep = qb.separated(", ");
    for id in ids {
        sep.push_bind(*id);
    }
    qb.push(")");
}

/// Tables whose ids callers check for ownership with [`owned_ids`].
#[derive(Debug, Clone, Copy)]
pub enum Owned {
    Jobs,
    Categories,
    Members,
}

/// The ids among `ids` that are rows of `table` belonging to this organization, in one query
/// (ids of the caller's type: the resource's typed id, or a plain UUID).
pub async fn owned_ids<I>(db: &Db, table: Owned, org_id: OrgId, ids: &[I]) -> DbResult<Vec<I>>
where
    I: Copy + Into<uuid::Uuid> + From<uuid::Uuid>,
{
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let select = match table {
        // `org_id + 0`: looked up by the ids' unique index, the organization checked on
        // each row (an index on the organization would make SQLite, without statistics,
        // read every row of the organization).
        Owned::Jobs => "SELECT id FROM jobs WHERE org_id + 0 = ",
        Owned::Categories => "SELECT id FROM categories WHERE org_id + 0 = ",
        // The primary key is (org_id, id).
        Owned::Members => "SELECT id FROM members WHERE org_id = ",
    };
    dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new(select);
        qb.push_bind(org_id).push(" AND id");
        let ids: Vec<uuid::Uuid> = ids.iter().map(|&id| id.into()).collect();
        push_in_list(&mut qb, &ids);
        let owned: Vec<uuid::Uuid> = qb.build_query_scalar().persistent(false).fetch_all(p).await?;
        Ok(owned.into_iter().map(I::from).collect())
    })
}

/// True when the error is a unique-constraint violation.
pub fn is_unique_violation(err: &StoreError) -> bool {
    err.is_unique()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_password() {
        assert_eq!(
            redact_url("postgres://app:secret@127.0.0.1:5432/app"),
            "postgres://app:***@127.0.0.1:5432/app"
        );
        assert_eq!(redact_url("sqlite://jobboard.db"), "sqlite://jobboard.db");
    }
}
