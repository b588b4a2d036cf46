//! The read caches: rendered response bodies of one node, per key (an organization, what
//! is read, and the normalised query), read through one protocol by every cached read
//! (job lists, CMS reads, board pages).
//!
//! An entry is served only while (a) the version number of what it was rendered from,
//! read from the database on every request (on SQLite, with the board of a host or the
//! key of a request, once per write of this process and at least every second: see
//! `jobboard_store::reuse`), is the one the entry was rendered at, and
//! (b) the clock is before the entry's deadline (the next moment a time window changes
//! the answer, and at most 60 s after rendering). Every write bumps the version in the
//! same transaction as the write, so a write on any node sharing the database invalidates
//! every node's entries at once. Concurrent misses of one key render it once: the others
//! wait for that rendering.
//!
//! Storage, eviction and the waiting are `quick_cache`'s, bounded by entry count and by
//! bytes.

use std::{
    future::Future,
    hash::Hash,
    sync::atomic::{AtomicU64, Ordering},
};

use bytes::Bytes;
use quick_cache::{
    Weighter,
    sync::{EntryAction, EntryResult},
};
use sha2::{Digest, Sha256};

/// Longest time an entry is served, in microseconds.
pub const MAX_AGE_MICROS: i64 = 60_000_000;
/// Entries a cache holds at most; its bytes are a share of `render_cache_mb`.
pub const MAX_ENTRIES: usize = 10_000;
/// Bytes of a cache made with [`Default`].
pub const MAX_BYTES: usize = 64 * 1024 * 1024;

/// A rendered response body and its strong ETag.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub body: Bytes,
    pub etag: String,
    /// The record a page shows (a job page's job), for what serving it records.
    pub subject: Option<uuid::Uuid>,
}

impl Rendered {
    pub fn new(body: Vec<u8>) -> Rendered {
        let digest = Sha256::digest(&body);
        let etag = format!("\"{}\"", hex::encode(&digest[..16]));
        Rendered {
            body: Bytes::from(body),
            etag,
            subject: None,
        }
    }

    /// The same rendering, naming the record it shows.
    pub fn about(mut self, subject: uuid::Uuid) -> Rendered {
        self.subject = Some(subject);
        self
    }
}

#[derive(Clone)]
struct Entry {
    version: i64,
    valid_until: i64,
    rendered: Rendered,
}

impl Entry {
    fn fresh(&self, version: i64, now: i64) -> bool {
        self.version == version && now < self.valid_until
    }
}

/// Weighs an entry by its body's bytes.
#[derive(Clone)]
struct ByBytes;

impl<K> Weighter<K, Entry> for ByBytes {
    fn weight(&self, _: &K, e: &Entry) -> u64 {
        e.rendered.body.len() as u64 + 64
    }
}

/// A bounded cache of rendered reads (one per node and kind of read).
pub struct Cache<K: Hash + Eq + Clone> {
    entries: quick_cache::sync::Cache<K, Entry, ByBytes>,
    max_bytes: usize,
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
            entries: quick_cache::sync::Cache::with_weighter(
                max_entries.max(1),
                max_bytes as u64,
                ByBytes,
            ),
            max_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            stores: AtomicU64::new(0),
        }
    }

    /// The bytes of rendered bodies this cache holds at most.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The rendering of `key` at `version`: a stored one while it is fresh at `now()`
    /// (microseconds since the epoch), else the one `render` makes (with the moment it
    /// stops being valid), stored for the next readers. While one caller renders a key,
    /// the others wait for its rendering. `bypass` renders afresh whatever is stored.
    pub async fn read_through<E, F, Fut>(
        &self,
        key: K,
        version: i64,
        now: impl Fn() -> i64,
        bypass: bool,
        render: F,
    ) -> Result<Rendered, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(Rendered, i64), E>>,
    {
        if bypass {
            self.misses.fetch_add(1, Ordering::Relaxed);
            let (rendered, valid_until) = render().await?;
            self.store(key, version, valid_until, &rendered, now());
            return Ok(rendered);
        }
        if let Some(e) = self.entries.get(&key)
            && e.fresh(version, now())
        {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(e.rendered);
        }
        let at = now();
        let guard = match self
            .entries
            .entry_async(&key, |_, e: &mut Entry| {
                if e.fresh(version, at) {
                    EntryAction::Retain(e.rendered.clone())
                } else {
                    EntryAction::ReplaceWithGuard
                }
            })
            .await
        {
            EntryResult::Retained(rendered) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(rendered);
            }
            EntryResult::Replaced(guard, _) | EntryResult::Vacant(guard) => Some(guard),
            EntryResult::Removed(..) | EntryResult::Timeout => None,
        };
        self.misses.fetch_add(1, Ordering::Relaxed);
        let (rendered, valid_until) = render().await?;
        let entry = Entry {
            version,
            valid_until,
            rendered: rendered.clone(),
        };
        if valid_until > now() && self.storable(&rendered) {
            self.stores.fetch_add(1, Ordering::Relaxed);
            match guard {
                Some(g) => {
                    let _ = g.insert(entry);
                }
                None => self.entries.insert(key, entry),
            }
        }
        Ok(rendered)
    }

    /// A body bigger than an eighth of the budget is never stored.
    fn storable(&self, r: &Rendered) -> bool {
        r.body.len() <= self.max_bytes / 8
    }

    fn store(&self, key: K, version: i64, valid_until: i64, rendered: &Rendered, now: i64) {
        if valid_until > now && self.storable(rendered) {
            self.stores.fetch_add(1, Ordering::Relaxed);
            self.entries.insert(
                key,
                Entry {
                    version,
                    valid_until,
                    rendered: rendered.clone(),
                },
            );
        }
    }

    /// Drops every entry whose key satisfies `doomed`.
    pub fn purge_where(&self, doomed: impl Fn(&K) -> bool) {
        self.entries.retain(|k, _| !doomed(k));
    }

    /// Number of entries and bytes held.
    pub fn size(&self) -> (usize, usize) {
        let s = self.stats();
        (s.entries, s.bytes)
    }

    /// Size and counters.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            entries: self.entries.len(),
            bytes: self
                .entries
                .iter()
                .map(|(_, e)| e.rendered.body.len())
                .sum(),
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            stores: self.stores.load(Ordering::Relaxed),
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
    use std::{
        convert::Infallible,
        sync::{Arc, atomic::AtomicUsize},
    };

    use super::*;

    fn key(q: &str) -> (i64, String) {
        (1, q.to_string())
    }

    async fn read(c: &Cache<(i64, String)>, k: &str, version: i64, now: i64) -> String {
        let r = c
            .read_through(
                key(k),
                version,
                || now,
                false,
                || async {
                    Ok::<_, Infallible>((
                        Rendered::new(format!("{k}@{version}").into_bytes()),
                        1_000,
                    ))
                },
            )
            .await
            .unwrap();
        String::from_utf8(r.body.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn version_and_deadline_bound_every_entry() {
        let c = Cache::default();
        assert_eq!(read(&c, "a", 3, 0).await, "a@3");
        assert_eq!(read(&c, "a", 3, 999).await, "a@3");
        assert_eq!(c.stats().hits, 1);
        // The deadline (a window boundary) is exclusive: rendered again, and not stored
        // (its deadline has passed).
        read(&c, "a", 3, 1_000).await;
        assert_eq!(c.stats().misses, 2);
        // Another version is a miss.
        assert_eq!(read(&c, "a", 4, 0).await, "a@4");
        assert_eq!(c.stats().misses, 3);
        c.purge_where(|k| k.0 == 1);
        assert_eq!(c.stats().entries, 0);
    }

    #[tokio::test]
    async fn concurrent_misses_render_once() {
        let c = Arc::new(Cache::<(i64, String)>::default());
        let renders = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..16 {
            let (c, renders) = (c.clone(), renders.clone());
            tasks.push(tokio::spawn(async move {
                c.read_through(
                    key("a"),
                    1,
                    || 0,
                    false,
                    || async move {
                        renders.fetch_add(1, Ordering::SeqCst);
                        tokio::task::yield_now().await;
                        Ok::<_, Infallible>((Rendered::new(b"x".to_vec()), 10))
                    },
                )
                .await
                .unwrap()
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(renders.load(Ordering::SeqCst), 1);
        assert_eq!(c.stats().stores, 1);
        assert_eq!(c.stats().hits, 15);
    }

    #[tokio::test]
    async fn bounded_by_bytes() {
        let c = Cache::<(i64, String)>::new(100, 8_000);
        for i in 0..50 {
            c.read_through(
                key(&i.to_string()),
                1,
                || 0,
                false,
                || async { Ok::<_, Infallible>((Rendered::new(vec![0; 500]), 10)) },
            )
            .await
            .unwrap();
        }
        assert!(c.stats().bytes <= 8_000, "{:?}", c.stats());
        // Bigger than an eighth of the budget: never stored.
        c.read_through(
            key("big"),
            1,
            || 0,
            false,
            || async { Ok::<_, Infallible>((Rendered::new(vec![0; 1_001]), 10)) },
        )
        .await
        .unwrap();
        assert!(c.entries.get(&key("big")).is_none());
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
