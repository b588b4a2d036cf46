//! What the tests observe besides responses: which node answered what (each node's own
//! request counters in `/metrics`), and background work awaited by polling with a
//! deadline, never with a fixed sleep.

use std::{collections::HashMap, time::Duration};

use tokio::time::Instant;

/// Request counts of one node by (route, method, status), from its `/metrics`.
pub type Counters = HashMap<(String, String, u16), u64>;

/// Reads the request counters of a node's `/metrics` text.
pub fn parse_counters(text: &str) -> Counters {
    let mut out = Counters::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("jobboard_http_requests_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split_once(&format!("{name}=\""))
                .and_then(|(_, v)| v.split_once('"'))
                .map(|(v, _)| v.to_string())
                .unwrap_or_default()
        };
        let status = label("status").parse().unwrap_or(0);
        let n = value.trim().parse().unwrap_or(0);
        out.insert((label("route"), label("method"), status), n);
    }
    out
}

/// How many requests on `route` with `method` (and `status`, when given) each node
/// answered between two readings of [`Cluster::counters`].
pub fn served(
    before: &[Option<Counters>],
    after: &[Option<Counters>],
    route: &str,
    method: &str,
    status: Option<u16>,
) -> Vec<u64> {
    let total = |c: &Option<Counters>| -> u64 {
        c.as_ref().map_or(0, |c| {
            c.iter()
                .filter(|((r, m, s), _)| {
                    r == route && m == method && status.is_none_or(|x| x == *s)
                })
                .map(|(_, n)| n)
                .sum()
        })
    };
    before
        .iter()
        .zip(after)
        .map(|(b, a)| total(a).saturating_sub(total(b)))
        .collect()
}

/// Asserts that every node answered some of the `what` requests counted by [`served`].
#[track_caller]
pub fn every_node_answered(counts: &[u64], what: &str) {
    assert!(
        counts.iter().all(|&n| n > 0),
        "{what}: every node should have answered some, but they answered {counts:?}"
    );
}

pub fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Calls `probe` until it answers `Ok` (every 50 ms); panics with `what` and the last
/// `Err` it gave when `limit` passes first.
pub async fn poll<T>(
    what: &str,
    limit: Duration,
    mut probe: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        let last = match probe().await {
            Ok(v) => return v,
            Err(e) => e,
        };
        assert!(
            Instant::now() < deadline,
            "{what}: not within {limit:?}; last seen: {last}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Calls `observe` (every 100 ms) until it has answered `Some` with the same value for
/// `quiet` on end: background work that settled. Panics when `limit` passes first.
pub async fn settled<T: PartialEq + std::fmt::Debug>(
    what: &str,
    quiet: Duration,
    limit: Duration,
    mut observe: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + limit;
    let mut last: Option<(T, Instant)> = None;
    loop {
        let now = Instant::now();
        match (observe().await, last.take()) {
            (Some(v), Some((prev, since))) if v == prev => {
                if now.duration_since(since) >= quiet {
                    return v;
                }
                last = Some((v, since));
            }
            (Some(v), _) => last = Some((v, now)),
            (None, _) => {}
        }
        assert!(
            now < deadline,
            "{what}: did not settle within {limit:?}; last seen: {:?}",
            last.map(|(v, _)| v)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
