//! Background work done once by three nodes: every node runs the webhook worker and the
//! scheduler, yet each event reaches each subscription once, and each scheduled expiry
//! moves its job, and fires its events, once.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::{
    harness::{Cluster, subscribe},
    observe::{every_node_answered, secs, served, settled},
    webhook_receiver::{Hit, Receiver},
};

/// Creates the jobs `bodies` through the balancer, four at a time; their ids, in order.
pub async fn create_jobs(c: &Cluster, bodies: Vec<Value>) -> Vec<String> {
    let mut set = JoinSet::new();
    let mut ids = Vec::new();
    for (i, body) in bodies.into_iter().enumerate() {
        let req = c.api(reqwest::Method::POST, "/jobs").json(&body);
        set.spawn(async move {
            let r = crate::common::Resp::read(req.send().await.expect("POST /api/jobs")).await;
            r.expect(201);
            (i, r.body["data"]["id"].as_str().unwrap().to_string())
        });
        if set.len() >= 4 {
            ids.push(set.join_next().await.unwrap().unwrap());
        }
    }
    while let Some(r) = set.join_next().await {
        ids.push(r.unwrap());
    }
    ids.sort();
    ids.into_iter().map(|(_, id)| id).collect()
}

/// What one delivery carried: (event, job id, delivery id).
fn delivered(h: &Hit) -> (String, String, String) {
    let v = h.json();
    (
        v["event"].as_str().unwrap_or("").to_string(),
        v["data"]["job_id"].as_str().unwrap_or("").to_string(),
        h.header("x-service-delivery").unwrap_or("").to_string(),
    )
}

/// The delivery log of subscription `sub` through the balancer: (delivery id, status,
/// attempts), sorted.
async fn delivery_log(c: &Cluster, sub: &str) -> Vec<(String, String, i64)> {
    let r = c
        .get(&format!("/webhooks/{sub}/deliveries?limit=100"))
        .await;
    r.expect(200);
    let mut log: Vec<_> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["id"].as_str().unwrap().to_string(),
                d["status"].as_str().unwrap().to_string(),
                d["attempts"].as_i64().unwrap(),
            )
        })
        .collect();
    log.sort();
    log
}

/// Waits until no delivery of `subs` is pending and neither the logs nor what the receiver
/// got changed for two seconds (two passes of every node's worker and scheduler); the
/// logs then.
async fn quiet_logs(
    c: &Cluster,
    rx: &Receiver,
    subs: &[String],
) -> Vec<Vec<(String, String, i64)>> {
    let (logs, _) = settled(
        "the delivery logs",
        Duration::from_secs(2),
        secs(30),
        async || {
            let mut logs = Vec::new();
            for s in subs {
                logs.push(delivery_log(c, s).await);
            }
            let pending = logs
                .iter()
                .flatten()
                .any(|(_, status, _)| status == "pending");
            (!pending).then(|| (logs, rx.all().len()))
        },
    )
    .await;
    logs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_reaches_each_subscription_once() {
    const N: usize = 30;
    const M: usize = 4;
    let Some(c) = Cluster::start("delivery::each_event_reaches_each_subscription_once").await
    else {
        return;
    };
    let rx = Receiver::start().await;
    let mut subs = Vec::new();
    for i in 0..M {
        subs.push(subscribe(&c, &rx, "job.created", &format!("/s{i}")).await);
    }
    let before = c.counters().await;
    let bodies = (0..N)
        .map(|i| json!({"title": format!("Welder {i}"), "company_name": "Acme", "description": "Welds.", "status": "active"}))
        .collect();
    let ids = create_jobs(&c, bodies).await;
    let after = c.counters().await;
    every_node_answered(
        &served(&before, &after, "/api/jobs", "POST", Some(201)),
        "job creations",
    );

    let pairs = |hits: &[Hit]| -> BTreeSet<(String, String)> {
        hits.iter()
            .map(|h| (h.path.clone(), delivered(h).1))
            .collect()
    };
    let all_arrived = rx
        .wait_until(secs(30), |hits| pairs(hits).len() >= N * M)
        .await;
    assert!(
        all_arrived,
        "{} of {} (event, subscription) pairs arrived",
        pairs(&rx.all()).len(),
        N * M
    );
    let logs = quiet_logs(&c, &rx, &subs).await;

    let hits = rx.all();
    let expected: BTreeSet<(String, String)> = (0..M)
        .flat_map(|i| ids.iter().map(move |id| (format!("/s{i}"), id.clone())))
        .collect();
    assert_eq!(
        pairs(&hits),
        expected,
        "each job's event at each subscription"
    );
    // Exactly one request per pair: no second delivery, no second attempt.
    let mut per_pair: HashMap<(String, String), usize> = HashMap::new();
    for h in &hits {
        *per_pair
            .entry((h.path.clone(), delivered(h).1))
            .or_default() += 1;
    }
    let doubled: BTreeMap<_, _> = per_pair.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        doubled.is_empty(),
        "{} requests for {} pairs: {} pairs delivered more than once, e.g. {:?}",
        hits.len(),
        N * M,
        doubled.len(),
        doubled.iter().take(4).collect::<Vec<_>>()
    );
    assert_eq!(hits.len(), N * M);
    assert!(hits.iter().all(|h| h.signature_valid == Some(true)));
    assert!(hits.iter().all(|h| delivered(h).0 == "job.created"));
    // The delivery logs say the same: N deliveries per subscription, each succeeded at its
    // first attempt, with the ids the receiver saw.
    for (i, log) in logs.iter().enumerate() {
        let path = format!("/s{i}");
        assert_eq!(log.len(), N, "deliveries of {path}: {log:?}");
        assert!(
            log.iter().all(|(_, s, a)| s == "succeeded" && *a == 1),
            "{path}: {log:?}"
        );
        let logged: BTreeSet<&str> = log.iter().map(|(id, _, _)| id.as_str()).collect();
        let received: Vec<String> = rx.hits(&path).iter().map(|h| delivered(h).2).collect();
        let received: BTreeSet<&str> = received.iter().map(String::as_str).collect();
        assert_eq!(logged, received, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_scheduled_expiry_fires_once() {
    const K: usize = 8;
    let Some(c) = Cluster::start("delivery::each_scheduled_expiry_fires_once").await else {
        return;
    };
    let rx = Receiver::start().await;
    let sub = subscribe(&c, &rx, "*", "/all").await;
    let expires_at = (chrono::Utc::now() + chrono::Duration::seconds(3))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let bodies = (0..K)
        .map(|i| json!({"title": format!("Seasonal picker {i}"), "company_name": "Orchard", "description": "Picks.", "status": "active", "expires_at": expires_at}))
        .collect();
    let ids = create_jobs(&c, bodies).await;

    let expired = |hits: &[Hit]| -> BTreeSet<String> {
        hits.iter()
            .map(delivered)
            .filter(|(event, _, _)| event == "job.expired")
            .map(|(_, job, _)| job)
            .collect()
    };
    let all_expired = rx
        .wait_until(secs(30), |hits| expired(hits).len() >= K)
        .await;
    assert!(
        all_expired,
        "{} of {K} jobs expired",
        expired(&rx.all()).len()
    );
    quiet_logs(&c, &rx, std::slice::from_ref(&sub)).await;

    // Per job: created once, expired once, one status change (active to expired), though
    // three schedulers ran.
    let hits = rx.all();
    for id in &ids {
        let mine: Vec<Value> = hits
            .iter()
            .map(Hit::json)
            .filter(|v| v["data"]["job_id"] == id.as_str())
            .collect();
        let mut events: Vec<&str> = mine.iter().map(|v| v["event"].as_str().unwrap()).collect();
        events.sort();
        assert_eq!(
            events,
            ["job.created", "job.expired", "job.status_changed"],
            "the events of job {id}"
        );
        let change = mine
            .iter()
            .find(|v| v["event"] == "job.status_changed")
            .unwrap();
        assert_eq!(change["data"]["previous_status"], "active");
        assert_eq!(change["data"]["status"], "expired");
        let r = c.get(&format!("/jobs/{id}")).await;
        r.expect(200);
        assert_eq!(r.body["data"]["status"], "expired");
    }
    assert_eq!(hits.len(), 3 * K, "one delivery per event");
    let delivery_ids: BTreeSet<String> = hits.iter().map(|h| delivered(h).2).collect();
    assert_eq!(delivery_ids.len(), 3 * K);
}
