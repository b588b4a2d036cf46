//! A key's rate limit is one limit for the whole cluster: the reads of a key allowed 100 per
//! minute are counted together whichever node answers them.

use std::time::Duration;

use reqwest::Method;
use tokio::{task::JoinSet, time::Instant};

use crate::{
    common::Resp,
    harness::{Cluster, last_line},
    observe::{every_node_answered, served},
};

/// GCRA admits the limit in a burst, then one more request per window / limit.
const REFILL: Duration = Duration::from_millis(600);

/// Sends `n` reads with `key` through the balancer, ten at a time.
async fn reads(c: &Cluster, key: &str, n: usize) -> Vec<Resp> {
    let mut set = JoinSet::new();
    let per_task = n.div_ceil(10);
    for t in 0..10 {
        let count = per_task.min(n.saturating_sub(t * per_task));
        let req = c.api_with(key, Method::GET, "/jobs?per_page=1");
        set.spawn(async move {
            let mut out = Vec::new();
            for _ in 0..count {
                let r = req
                    .try_clone()
                    .unwrap()
                    .send()
                    .await
                    .expect("GET /api/jobs");
                out.push(Resp::read(r).await);
            }
            out
        });
    }
    let mut all = Vec::new();
    while let Some(r) = set.join_next().await {
        all.extend(r.unwrap());
    }
    all
}

/// Asserts a refusal for the rate limit: `429 rate_limited` with `Retry-After`.
#[track_caller]
fn assert_refused(r: &Resp) {
    r.expect(429);
    assert_eq!(r.body["error"]["code"], "rate_limited", "{}", r.text);
    assert!(r.header("retry-after").is_some(), "{:?}", r.headers);
}

/// Refills that can have happened since `start`: the most requests beyond the limit a
/// correct limiter admits by now.
fn refills_since(start: Instant) -> usize {
    (start.elapsed().as_nanos() / REFILL.as_nanos()) as usize
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_limited_exactly_across_nodes() {
    let Some(c) = Cluster::start("rate_limits::reads_are_limited_exactly_across_nodes").await
    else {
        return;
    };
    let org = c.org_id.to_string();
    let key = last_line(&c.cli(
        &["keys", "create", "--org", &org, "--read-limit", "100"],
        None,
    ));
    let before = c.counters().await;

    // A burst of the limit: every read is allowed, wherever it lands.
    let start = Instant::now();
    let burst = reads(&c, &key, 100).await;
    let statuses: Vec<u16> = burst.iter().map(|r| r.status.as_u16()).collect();
    assert!(
        statuses.iter().all(|&s| s == 200),
        "the first 100 reads are allowed: {statuses:?}"
    );
    assert!(
        burst
            .iter()
            .all(|r| r.header("x-ratelimit-limit") == Some("100"))
    );

    // The 101st is refused, whichever node answers it (unless a refill came meanwhile).
    let r101 = Resp::read(
        c.api_with(&key, Method::GET, "/jobs?per_page=1")
            .send()
            .await
            .unwrap(),
    )
    .await;
    let refills_101 = refills_since(start);
    let elapsed_101 = start.elapsed();
    if refills_101 == 0 {
        assert_refused(&r101);
        assert_eq!(r101.body["error"]["details"]["limit"], 100);
    }

    // More reads: refused on every node, but for the refills of the time they took.
    let more = reads(&c, &key, 29).await;
    let refills = refills_since(start);
    let allowed_after = more
        .iter()
        .chain([&r101])
        .filter(|r| r.status == 200)
        .count();
    for r in more.iter().filter(|r| r.status != 200) {
        assert_refused(r);
    }
    assert!(
        allowed_after <= refills,
        "only the limit and its refills are allowed: {allowed_after} reads beyond 100 in {:?} \
         (at most {refills}), the 101st answered {} after {elapsed_101:?}",
        start.elapsed(),
        r101.status
    );
    eprintln!(
        "rate limit: 100 allowed, then {allowed_after} of 30 allowed in {:?} (101st after {elapsed_101:?}: {})",
        start.elapsed(),
        r101.status
    );

    // All three nodes answered reads, and all three refused some.
    let after = c.counters().await;
    let answered = served(&before, &after, "/api/jobs", "GET", None);
    assert_eq!(answered.iter().sum::<u64>(), 130, "{answered:?}");
    every_node_answered(&answered, "reads of the burst");
    let refused = served(&before, &after, "/api/jobs", "GET", Some(429));
    every_node_answered(&refused, "refused reads");
    assert_eq!(
        refused.iter().sum::<u64>() as usize,
        30 - allowed_after,
        "{refused:?}"
    );
}
