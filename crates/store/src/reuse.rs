//! Reads this node may answer from memory: what most requests must read before anything
//! else (the board a host reaches, the key a request carries) and what changes rarely.
//!
//! A value read is reused while this process has committed nothing since it was read
//! ([`crate::committed_writes`]: every write of this node is seen by its next request),
//! and:
//!
//! - on SQLite, for at most [`REUSE`], which bounds how late a change made by another
//!   process on the same file (the command line) is seen;
//! - on PostgreSQL, while no other commit has been announced to this node
//!   ([`Db::changes`]: every commit, on any node, notifies every node right after it,
//!   see [`crate::Tx::commit`]) and for at most [`REUSE_NOTIFIED`]. While the
//!   notifications are not received (at the start, and from a lost connection until it is
//!   made again) every call reads. A write through one node is so seen through every
//!   other node as soon as its notification arrives there, a matter of milliseconds.

use std::{
    collections::HashMap,
    future::Future,
    hash::Hash,
    sync::RwLock,
    time::{Duration, Instant},
};

use crate::{Backend, Db, committed_writes};

/// The longest a value is reused on SQLite: how long a change made by another process
/// may take to be seen.
pub const REUSE: Duration = Duration::from_secs(1);

/// The longest a value is reused on PostgreSQL, where every commit is announced: how late
/// a change is seen when its announcement is lost without the connection (a node that
/// stopped between its commit and the notification).
pub const REUSE_NOTIFIED: Duration = Duration::from_secs(5);

struct Remembered<V> {
    value: V,
    /// [`committed_writes`] before the value was read.
    writes: u64,
    /// [`Db::changes`] before the value was read.
    changes: u64,
    read_at: Instant,
}

/// Values by database ([`Db::id`]) and key, at most `max` of them (keys may come from
/// requests: past the bound the map starts over).
pub struct Reused<K, V> {
    values: RwLock<HashMap<(u64, K), Remembered<V>>>,
    max: usize,
}

impl<K: Hash + Eq + Clone, V: Clone> Reused<K, V> {
    pub fn new(max: usize) -> Reused<K, V> {
        Reused {
            values: RwLock::default(),
            max,
        }
    }

    /// The value of `key`: remembered (see the module's description), else what `read`
    /// answers, remembered when it is `Some`.
    pub async fn get<E, F, Fut>(&self, db: &Db, key: K, read: F) -> Result<Option<V>, E>
    where
        F: FnOnce(K) -> Fut,
        Fut: Future<Output = Result<Option<V>, E>>,
    {
        let writes = committed_writes();
        let Some(changes) = db.changes() else {
            return read(key).await;
        };
        let key = (db.id(), key);
        if let Some(v) = self.fresh(db, &key, writes) {
            return Ok(Some(v));
        }
        let read_at = Instant::now();
        let value = read(key.1.clone()).await?;
        if let Some(value) = &value {
            let mut values = self.values.write().unwrap_or_else(|e| e.into_inner());
            if values.len() >= self.max && !values.contains_key(&key) {
                values.clear();
            }
            values.insert(
                key,
                Remembered {
                    value: value.clone(),
                    writes,
                    changes,
                    read_at,
                },
            );
        }
        Ok(value)
    }

    /// The value of `key` when a remembered one may still be used (see the module's
    /// description), without reading: for callers that read in a way of their own on a
    /// miss.
    pub fn peek(&self, db: &Db, key: K) -> Option<V> {
        self.fresh(db, &(db.id(), key), committed_writes())
    }

    fn fresh(&self, db: &Db, key: &(u64, K), writes: u64) -> Option<V> {
        let bound = match db.backend() {
            Backend::Sqlite => REUSE,
            Backend::Postgres => REUSE_NOTIFIED,
        };
        self.values
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .filter(|r| r.writes == writes && r.read_at.elapsed() < bound)
            .filter(|r| db.unchanged(r.changes))
            .map(|r| r.value.clone())
    }
}
