//! The CMS read cache: rendered list and item responses per organization, collection and
//! query.
//!
//! An entry is served only while (a) the collection's version number, read from the
//! database with one indexed lookup on every request, is the one the entry was rendered
//! at, and (b) the clock is before the entry's deadline: at most 60 s after rendering and
//! never past the collection's next `starts_at`/`expires_at` boundary. Every write to a
//! collection bumps its version in the same transaction as the write, so a write on any
//! node sharing the database invalidates every node's entries at once; the writing node
//! also drops its own entries right away to free the memory.
//!
//! The cache is bounded by entry count and by bytes; the oldest entries go first.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Mutex,
};

use axum::body::Bytes;
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Longest time an entry is served, in microseconds.
pub const MAX_AGE_MICROS: i64 = 60_000_000;
/// Default bounds.
pub const MAX_ENTRIES: usize = 10_000;
pub const MAX_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub org_id: i64,
    pub collection_id: Uuid,
    /// The normalised query (`list:published:50:0`, `item:<id>`).
    pub query: String,
}

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

#[derive(Default)]
struct Inner {
    map: HashMap<CacheKey, Entry>,
    order: BTreeMap<u64, CacheKey>,
    bytes: usize,
    seq: u64,
}

impl Inner {
    fn remove(&mut self, key: &CacheKey) {
        if let Some(e) = self.map.remove(key) {
            self.order.remove(&e.seq);
            self.bytes -= e.rendered.body.len();
        }
    }
}

/// The bounded cache of CMS reads (one per node).
pub struct Cache {
    inner: Mutex<Inner>,
    max_entries: usize,
    max_bytes: usize,
}

impl Default for Cache {
    fn default() -> Cache {
        Cache::new(MAX_ENTRIES, MAX_BYTES)
    }
}

impl Cache {
    pub fn new(max_entries: usize, max_bytes: usize) -> Cache {
        Cache {
            inner: Mutex::new(Inner::default()),
            max_entries,
            max_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The entry for `key` if it was rendered at `version` and `now` (microseconds since
    /// the epoch) is before its deadline; a stale entry is dropped.
    pub fn get(&self, key: &CacheKey, version: i64, now: i64) -> Option<Rendered> {
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
    pub fn put(&self, key: CacheKey, version: i64, valid_until: i64, rendered: Rendered) {
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

    /// Drops every entry of one collection.
    pub fn purge(&self, org_id: i64, collection_id: Uuid) {
        let mut inner = self.lock();
        let doomed: Vec<CacheKey> = inner
            .map
            .keys()
            .filter(|k| k.org_id == org_id && k.collection_id == collection_id)
            .cloned()
            .collect();
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

    fn key(q: &str) -> CacheKey {
        CacheKey {
            org_id: 1,
            collection_id: Uuid::nil(),
            query: q.into(),
        }
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
        c.purge(1, Uuid::nil());
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
