//! Sharing one lookup among concurrent callers, without ever answering a caller with a
//! lookup that began before it asked.
//!
//! The first caller for a key starts a task that runs rounds: each round takes the
//! callers waiting at that moment, runs the lookup once, and answers them all. Callers
//! that arrive while a round runs wait for the next round, which starts after they
//! arrived; so every caller sees at least every change committed before its call (a key
//! revoked before a request arrived is never accepted for it), while a burst of requests
//! costs one lookup per round instead of one each. A lookup learns how many callers its
//! round answers, and each caller learns its place in the round, so a lookup can also take
//! one unit of something per caller (a rate limit's requests) in the same statement.

use std::{collections::HashMap, future::Future, hash::Hash, sync::Arc, sync::Mutex};

use tokio::sync::oneshot;

/// The callers waiting for a key's next round: each gets the value and its place.
type Waiting<V> = Vec<oneshot::Sender<(V, usize)>>;

/// Concurrent lookups of one kind, by key.
pub struct Coalescer<K, V> {
    waiting: Mutex<HashMap<K, Waiting<V>>>,
}

impl<K, V> Default for Coalescer<K, V> {
    fn default() -> Self {
        Coalescer {
            waiting: Mutex::new(HashMap::new()),
        }
    }
}

impl<K, V> Coalescer<K, V>
where
    K: Hash + Eq + Clone + Send + 'static,
    V: Clone + Send + 'static,
{
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<K, Waiting<V>>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The result of a `fetch(key, n)` that starts after this call and answers `n`
    /// callers, with this caller's place among them (`0..n`, in the order they called);
    /// `None` only if the lookup task failed (panicked).
    pub async fn get<F, Fut>(self: &Arc<Self>, key: K, fetch: F) -> Option<(V, usize)>
    where
        F: Fn(K, usize) -> Fut + Send + 'static,
        Fut: Future<Output = V> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut map = self.map();
            match map.get_mut(&key) {
                Some(waiting) => {
                    waiting.push(tx);
                    false
                }
                None => {
                    map.insert(key.clone(), vec![tx]);
                    true
                }
            }
        };
        if start {
            tokio::spawn(rounds(self.clone(), key, fetch));
        }
        rx.await.ok()
    }

    /// Keys with a lookup task running.
    pub fn active(&self) -> usize {
        self.map().len()
    }
}

/// Removes the key's entry if the task ends abnormally, so its waiters are released and
/// the next caller starts a new task.
struct Armed<K: Hash + Eq + Clone + Send + 'static, V: Clone + Send + 'static> {
    owner: Arc<Coalescer<K, V>>,
    key: K,
    armed: bool,
}

impl<K: Hash + Eq + Clone + Send + 'static, V: Clone + Send + 'static> Drop for Armed<K, V> {
    fn drop(&mut self) {
        if self.armed {
            self.owner.map().remove(&self.key);
        }
    }
}

async fn rounds<K, V, F, Fut>(owner: Arc<Coalescer<K, V>>, key: K, fetch: F)
where
    K: Hash + Eq + Clone + Send + 'static,
    V: Clone + Send + 'static,
    F: Fn(K, usize) -> Fut + Send + 'static,
    Fut: Future<Output = V> + Send + 'static,
{
    let mut guard = Armed {
        owner,
        key,
        armed: true,
    };
    loop {
        let batch = {
            let mut map = guard.owner.map();
            match map.get_mut(&guard.key) {
                Some(w) if !w.is_empty() => std::mem::take(w),
                _ => {
                    map.remove(&guard.key);
                    drop(map);
                    guard.armed = false;
                    return;
                }
            }
        };
        let value = fetch(guard.key.clone(), batch.len()).await;
        for (place, tx) in batch.into_iter().enumerate() {
            let _ = tx.send((value.clone(), place));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_burst_shares_rounds_that_start_after_each_call() {
        let c: Arc<Coalescer<u8, (u64, usize)>> = Arc::default();
        // The value is the number of lookups started so far (a caller must never get a
        // value from a lookup that started before it called) and the round's size.
        let started = Arc::new(AtomicU64::new(0));
        let mut calls = Vec::new();
        for _ in 0..50 {
            let c = c.clone();
            let started = started.clone();
            let before = started.load(Ordering::SeqCst);
            calls.push(tokio::spawn(async move {
                let (v, place) = c
                    .get(1, move |_, n| {
                        let started = started.clone();
                        async move {
                            let round = started.fetch_add(1, Ordering::SeqCst) + 1;
                            tokio::task::yield_now().await;
                            (round, n)
                        }
                    })
                    .await
                    .unwrap();
                (before, v, place)
            }));
        }
        let mut places: HashMap<u64, (usize, Vec<usize>)> = HashMap::new();
        for call in calls {
            let (before, (round, n), place) = call.await.unwrap();
            assert!(
                round > before,
                "answered by a lookup started after the call"
            );
            let entry = places.entry(round).or_insert((n, Vec::new()));
            assert_eq!(entry.0, n);
            entry.1.push(place);
        }
        assert!(started.load(Ordering::SeqCst) < 50, "lookups were shared");
        // Each round told its lookup how many callers it answers, and gave each its own
        // place among them.
        for (n, mut seen) in places.into_values() {
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
        assert_eq!(c.active(), 0);
    }

    #[tokio::test]
    async fn a_failing_lookup_releases_its_waiters() {
        let c: Arc<Coalescer<u8, u64>> = Arc::default();
        let failed = c
            .get(1, |_, _| async {
                if true {
                    panic!("lookup failed");
                }
                0
            })
            .await;
        assert_eq!(failed, None);
        assert_eq!(c.active(), 0);
        assert_eq!(c.get(1, |_, _| async { 7 }).await, Some((7, 0)));
    }
}
