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
    sync::Mutex,
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
            None => return None,
            Some(e) => e.version == version && now < e.valid_until,
        };
        if fresh {
            inner.map.get(key).map(|e| e.rendered.clone())
        } else {
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
