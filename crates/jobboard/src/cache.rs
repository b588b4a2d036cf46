//! The read caches: rendered response bodies of one node, per key (an organization, what
//! is read, and the normalised query).
//!
//! An entry is served only while (a) the version number of what it was rendered from,
//! read from the database on every request, is the one the entry was rendered at, and
//! (b) the clock is before the entry's deadline (the next moment a time window changes
//! the answer, and at most 60 s after rendering). Every write bumps the version in the
//! same transaction as the write, so a write on any node sharing the database invalidates
//! every node's entries at once.
//!
//! CMS reads key by collection ([`crate::cms::CacheKey`]), job lists by organization and
//! query. Each cache is bounded by entry count and by bytes; the oldest entries go first.

use std::{
    collections::{BTreeMap, HashMap},
    hash::Hash,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use axum::body::Bytes;
use sha2::{Digest, Sha256};

/// Longest time an entry is served, in microseconds.
pub const MAX_AGE_MICROS: i64 = 60_000_000;
/// Default bounds.
pub const MAX_ENTRIES: usize = 10_000;
pub const MAX_BYTES: usize = 64 * 1024 * 1024;

/// A rendered response body and its strong ETag.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub body: Bytes,
    pub etag: String,
}

impl Rendered {
    pub fn new(body: Vec<u8>) -> Rendered {
        let digest = Sha256::digest(&body);
        let etag = format!("\"{}\"", hex::encode(&digest[..16]));
        Rendered {
            body: Bytes::from(body),
            etag,
        }
    }
}

struct Entry {
    version: i64,
    valid_until: i64,
    rendered: Rendered,
    seq: u64,
}

struct Inner<K> {
    map: HashMap<K, Entry>,
    order: BTreeMap<u64, K>,
    bytes: usize,
    seq: u64,
}

impl<K: Hash + Eq + Clone> Inner<K> {
    fn remove(&mut self, key: &K) {
        if let Some(e) = self.map.remove(key) {
            self.order.remove(&e.seq);
            self.bytes -= e.rendered.body.len();
        }
    }
}

/// A bounded cache of rendered reads (one per node and kind of read).
pub struct Cache<K> {
    inner: Mutex<Inner<K>>,
    max_entries: usize,
    max_bytes: usize,
    stats: Stats,
}

/// Counters of a cache since start.
#[derive(Default)]
struct Stats {
    hits: AtomicU64,
    misses: AtomicU64,
    stores: AtomicU64,
}

/// What a cache holds and has done, for `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    pub entries: usize,
    pub bytes: usize,
    pub hits: u64,
    pub misses: u64,
    /// Renderings stored.
    pub stores: u64,
}

impl<K: Hash + Eq + Clone> Default for Cache<K> {
    fn default() -> Cache<K> {
        Cache::new(MAX_ENTRIES, MAX_BYTES)
    }
}

impl<K: Hash + Eq + Clone> Cache<K> {
    pub fn new(max_entries: usize, max_bytes: usize) -> Cache<K> {
        Cache {
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                order: BTreeMap::new(),
                bytes: 0,
                seq: 0,
            }),
            max_entries,
            max_bytes,
            stats: Stats::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<K>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The entry for `key` if it was rendered at `version` and `now` (microseconds since
    /// the epoch) is before its deadline; a stale entry is dropped.
    pub fn get(&self, key: &K, version: i64, now: i64) -> Option<Rendered> {
        let mut inner = self.lock();
        let fresh = match inner.map.get(key) {
            None => {
                self.stats.misses.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            Some(e) => e.version == version && now < e.valid_until,
        };
        if fresh {
            self.stats.hits.fetch_add(1, Ordering::Relaxed);
            inner.map.get(key).map(|e| e.rendered.clone())
        } else {
            self.stats.misses.fetch_add(1, Ordering::Relaxed);
            inner.remove(key);
            None
        }
    }

    /// Stores a rendering made at `version`, to be served until `valid_until` at the latest.
    pub fn put(&self, key: K, version: i64, valid_until: i64, rendered: Rendered) {
        let size = rendered.body.len();
        if size > self.max_bytes / 8 || self.max_entries == 0 {
            return;
        }
        self.stats.stores.fetch_add(1, Ordering::Relaxed);
        let mut inner = self.lock();
        inner.remove(&key);
        while inner.map.len() >= self.max_entries || inner.bytes + size > self.max_bytes {
            let Some((_, oldest)) = inner.order.pop_first() else {
                break;
            };
            if let Some(e) = inner.map.remove(&oldest) {
                inner.bytes -= e.rendered.body.len();
            }
        }
        inner.seq += 1;
        let seq = inner.seq;
        inner.order.insert(seq, key.clone());
        inner.bytes += size;
        inner.map.insert(
            key,
            Entry {
                version,
                valid_until,
                rendered,
                seq,
            },
        );
    }

    /// Drops every entry whose key satisfies `doomed`.
    pub fn purge_where(&self, doomed: impl Fn(&K) -> bool) {
        let mut inner = self.lock();
        let doomed: Vec<K> = inner.map.keys().filter(|k| doomed(k)).cloned().collect();
        for k in doomed {
            inner.remove(&k);
        }
    }

    /// Number of entries and bytes held.
    pub fn size(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.map.len(), inner.bytes)
    }

    /// Size and counters.
    pub fn stats(&self) -> CacheStats {
        let (entries, bytes) = self.size();
        CacheStats {
            entries,
            bytes,
            hits: self.stats.hits.load(Ordering::Relaxed),
            misses: self.stats.misses.load(Ordering::Relaxed),
            stores: self.stats.stores.load(Ordering::Relaxed),
        }
    }
}

/// One lock per key being rendered, so that concurrent misses of one key render it once:
/// the first renders while the others wait, then find the rendering in the cache (no
/// stampede after a write or an expiry). Locks are dropped once nobody holds or awaits them.
pub struct RenderLocks<K> {
    locks: Mutex<HashMap<K, std::sync::Arc<tokio::sync::Mutex<()>>>>,
}

impl<K: Hash + Eq + Clone> Default for RenderLocks<K> {
    fn default() -> RenderLocks<K> {
        RenderLocks {
            locks: Mutex::new(HashMap::new()),
        }
    }
}

/// Held while rendering one key.
pub struct RenderGuard<'a, K: Hash + Eq + Clone> {
    locks: &'a RenderLocks<K>,
    key: K,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl<K: Hash + Eq + Clone> RenderLocks<K> {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<K, std::sync::Arc<tokio::sync::Mutex<()>>>> {
        self.locks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until no other request renders `key`, and holds it.
    pub async fn lock(&self, key: &K) -> RenderGuard<'_, K> {
        let lock = self.map().entry(key.clone()).or_default().clone();
        let guard = lock.lock_owned().await;
        RenderGuard {
            locks: self,
            key: key.clone(),
            guard: Some(guard),
        }
    }

    /// Keys currently locked or awaited.
    pub fn len(&self) -> usize {
        self.map().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<K: Hash + Eq + Clone> Drop for RenderGuard<'_, K> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut map = self.locks.map();
        // Only the map still refers to the lock: nobody holds or awaits it.
        if map
            .get(&self.key)
            .is_some_and(|l| std::sync::Arc::strong_count(l) == 1)
        {
            map.remove(&self.key);
        }
    }
}

/// True when an `If-None-Match` header value matches `etag` (weak comparison, as the
/// header requires; `*` matches any).
pub fn none_match(header: &str, etag: &str) -> bool {
    let bare = etag.trim_start_matches("W/");
    header
        .split(',')
        .map(str::trim)
        .any(|t| t == "*" || t.trim_start_matches("W/") == bare)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(q: &str) -> (i64, String) {
        (1, q.to_string())
    }

    #[test]
    fn version_and_deadline_bound_every_entry() {
        let c = Cache::default();
        c.put(key("a"), 3, 1_000, Rendered::new(b"x".to_vec()));
        assert!(c.get(&key("a"), 3, 999).is_some());
        // The deadline (a window boundary) is exclusive.
        assert!(c.get(&key("a"), 3, 1_000).is_none());
        assert_eq!(c.size(), (0, 0));
        c.put(key("a"), 3, 1_000, Rendered::new(b"x".to_vec()));
        assert!(
            c.get(&key("a"), 4, 0).is_none(),
            "another version is a miss"
        );
        c.put(key("a"), 3, 1_000, Rendered::new(b"x".to_vec()));
        c.purge_where(|k| k.0 == 1);
        assert!(c.get(&key("a"), 3, 0).is_none());
    }

    #[test]
    fn bounded_by_entries_and_bytes() {
        let c = Cache::new(2, 800);
        c.put(key("a"), 1, 10, Rendered::new(vec![0; 10]));
        c.put(key("b"), 1, 10, Rendered::new(vec![0; 10]));
        c.put(key("c"), 1, 10, Rendered::new(vec![0; 10]));
        assert_eq!(c.size(), (2, 20));
        assert!(c.get(&key("a"), 1, 0).is_none(), "oldest evicted");
        c.put(key("d"), 1, 10, Rendered::new(vec![0; 100]));
        c.put(key("e"), 1, 10, Rendered::new(vec![0; 100]));
        assert!(c.size().1 <= 800);
        // Bigger than an eighth of the budget: never stored.
        c.put(key("f"), 1, 10, Rendered::new(vec![0; 101]));
        assert!(c.get(&key("f"), 1, 0).is_none());
    }

    #[tokio::test]
    async fn render_locks_serialise_one_key_and_clean_up() {
        let locks = std::sync::Arc::new(RenderLocks::<(i64, String)>::default());
        let first = locks.lock(&key("a")).await;
        // Another key is not blocked.
        drop(locks.lock(&key("b")).await);
        let waiter = {
            let locks = locks.clone();
            tokio::spawn(async move {
                let _g = locks.lock(&key("a")).await;
            })
        };
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "the second request waits");
        drop(first);
        waiter.await.unwrap();
        assert!(locks.is_empty(), "no lock is kept once nobody needs it");
    }

    #[test]
    fn etags() {
        let r = Rendered::new(b"{}".to_vec());
        assert!(r.etag.starts_with('"') && r.etag.len() == 34);
        assert!(none_match(&r.etag, &r.etag));
        assert!(none_match(&format!("\"x\", W/{}", r.etag), &r.etag));
        assert!(none_match("*", &r.etag));
        assert!(!none_match("\"other\"", &r.etag));
    }
}
