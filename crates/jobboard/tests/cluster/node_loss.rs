//! A node killed (SIGKILL) in the middle of a write load: every write that was
//! acknowledged is there afterwards and its event is delivered, and the other nodes go on
//! answering (the balancer retries a refused connection on another node). A request in
//! flight on the killed node may fail; it was never acknowledged.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicBool, AtomicUsize, Ordering},
};

use serde_json::json;

use crate::{
    common::Resp,
    harness::{Cluster, subscribe},
    observe::{every_node_answered, poll, secs, served},
    webhook_receiver::{Hit, Receiver},
};

/// Concurrent writers.
const WRITERS: usize = 6;
/// Writes acknowledged before the kill.
const BEFORE: usize = 60;
/// Writes started, and finished, after the kill.
const AFTER: usize = 60;

/// One write of the load.
#[derive(Debug)]
struct Write {
    title: String,
    /// Sent after the killed node was gone.
    after_kill: bool,
    /// The new job's id when acknowledged (`201` with an id), else what came back.
    outcome: Result<String, String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_loses_no_acknowledged_write() {
    let Some(mut c) = Cluster::start("node_loss::a_killed_node_loses_no_acknowledged_write").await
    else {
        return;
    };
    let rx = Receiver::start().await;
    subscribe(&c, &rx, "job.created", "/load").await;
    let start = c.counters().await;

    let killed = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let done_after = Arc::new(AtomicUsize::new(0));
    let writes = Arc::new(Mutex::new(Vec::<Write>::new()));
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (killed, stop, acked, done_after, writes) = (
            killed.clone(),
            stop.clone(),
            acked.clone(),
            done_after.clone(),
            writes.clone(),
        );
        let req = c.api(reqwest::Method::POST, "/jobs");
        writers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let title = format!("Stevedore {w}-{i}");
                let after_kill = killed.load(Ordering::SeqCst);
                let sent = req
                    .try_clone()
                    .unwrap()
                    .json(&json!({"title": title, "company_name": "Docks", "description": "Loads ships.", "status": "active"}))
                    .send()
                    .await;
                let outcome = match sent {
                    Ok(r) => {
                        let r = Resp::read(r).await;
                        match r.body["data"]["id"].as_str() {
                            Some(id) if r.status == 201 => Ok(id.to_string()),
                            _ => Err(format!("{}: {}", r.status, r.text)),
                        }
                    }
                    Err(e) => Err(e.to_string()),
                };
                if outcome.is_ok() {
                    acked.fetch_add(1, Ordering::SeqCst);
                }
                if after_kill {
                    done_after.fetch_add(1, Ordering::SeqCst);
                }
                writes.lock().unwrap().push(Write {
                    title,
                    after_kill,
                    outcome,
                });
            }
        }));
    }

    poll("writes before the kill", secs(30), async || {
        let n = acked.load(Ordering::SeqCst);
        if n >= BEFORE {
            Ok(())
        } else {
            Err(format!("{n} acknowledged"))
        }
    })
    .await;
    let before_kill = c.counters().await;
    c.nodes[1].kill();
    killed.store(true, Ordering::SeqCst);
    poll("writes after the kill", secs(30), async || {
        let n = done_after.load(Ordering::SeqCst);
        if n >= AFTER {
            Ok(())
        } else {
            Err(format!("{n} answered"))
        }
    })
    .await;
    stop.store(true, Ordering::SeqCst);
    for w in writers {
        w.await.unwrap();
    }
    let after = c.counters().await;
    let writes = std::mem::take(&mut *writes.lock().unwrap());

    // The killed node was taking writes when it died; the others took them after.
    every_node_answered(
        &served(&start, &before_kill, "/api/jobs", "POST", Some(201)),
        "writes before the kill",
    );
    let survivors = served(&before_kill, &after, "/api/jobs", "POST", Some(201));
    assert_eq!(survivors[1], 0);
    every_node_answered(
        &[survivors[0], survivors[2]],
        "writes after the kill, on the nodes left",
    );

    // Only requests in flight at the kill may have failed: at most one per writer, and
    // every request sent after it succeeded.
    let failed: Vec<&Write> = writes.iter().filter(|w| w.outcome.is_err()).collect();
    assert!(
        failed.iter().all(|w| !w.after_kill),
        "requests sent after the kill failed: {failed:?}"
    );
    assert!(failed.len() <= WRITERS, "{failed:?}");
    let acknowledged: Vec<(&str, &str)> = writes
        .iter()
        .filter_map(|w| {
            w.outcome
                .as_ref()
                .ok()
                .map(|id| (id.as_str(), w.title.as_str()))
        })
        .collect();
    eprintln!(
        "node loss: {} writes, {} acknowledged ({} sent after the kill), {} failed in flight: {:?}",
        writes.len(),
        acknowledged.len(),
        writes.iter().filter(|w| w.after_kill).count(),
        failed.len(),
        failed.iter().map(|w| &w.outcome).collect::<Vec<_>>()
    );

    // Every acknowledged write is there, read through the balancer.
    for (id, title) in &acknowledged {
        let r = c.get(&format!("/jobs/{id}")).await;
        r.expect(200);
        assert_eq!(r.body["data"]["title"], *title);
    }
    // And its event is delivered (the killed node's claims run out and another node sends
    // them).
    let missing = |hits: &[Hit]| -> Vec<String> {
        let arrived: std::collections::HashSet<String> = hits
            .iter()
            .filter_map(|h| h.json()["data"]["job_id"].as_str().map(str::to_string))
            .collect();
        acknowledged
            .iter()
            .filter(|(id, _)| !arrived.contains(*id))
            .map(|(id, _)| id.to_string())
            .collect()
    };
    let all = rx
        .wait_until(secs(45), |hits| missing(hits).is_empty())
        .await;
    assert!(
        all,
        "events of acknowledged writes never delivered: {:?}",
        missing(&rx.all())
    );
}
