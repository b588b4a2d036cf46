//! The delivery worker: delivering without waiting for a poll, handing attempts back on a
//! graceful shutdown, losing no event to a SIGKILL, and recording a burst of attempts once each.

use std::time::Duration;

use jobboard::delivery::webhooks::drain;
use jobboard_domain::{OrgId, webhooks as store};
use jobboard_store::events;
use serde_json::{Value, json};

use super::*;

use crate::{
    backends,
    webhook_receiver::{Behavior, Receiver},
};

backends!(
    worker_delivers_without_waiting_for_a_poll,
    graceful_shutdown_hands_attempts_back,
    sigkill_loses_no_event,
    a_burst_of_attempts_is_recorded_once_each,
);

async fn worker_delivers_without_waiting_for_a_poll(b: Backend) {
    let t = TestApp::spawn(b).await;
    let rx = Receiver::start().await;
    subscribe(&t, "*", "webhook", &rx.url("/live"), None).await;
    for i in 0..5 {
        emit(&t, "job.created", json!({"n": i})).await;
    }
    let ok = rx
        .wait_until(Duration::from_secs(10), |h| h.len() >= 5)
        .await;
    assert!(ok, "the worker delivered {} of 5", rx.all().len());
    t.stop().await;
}

async fn graceful_shutdown_hands_attempts_back(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.answer(
        "/stuck",
        Behavior {
            delay: Duration::from_secs(60),
            ..Behavior::default()
        },
    );
    let sub = subscribe(&t, "*", "webhook", &rx.url("/stuck"), None).await;
    // The worker loop, as `serve` runs it, with a stop signal of our own.
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let worker = tokio::spawn(jobboard::delivery::webhooks::run(t.app.clone(), stop_rx));
    emit(&t, "job.created", json!({})).await;
    assert!(
        rx.wait_until(Duration::from_secs(10), |h| !h.is_empty())
            .await
    );
    assert_eq!(leased(&t).await, 1, "the attempt is in flight");
    stop.send(true).unwrap();
    worker.await.unwrap();
    assert_eq!(leased(&t).await, 0, "the lease was handed back");
    let ds = store::list_deliveries(t.db(), t.org_id, sub.parse().unwrap(), 10)
        .await
        .unwrap();
    assert_eq!(ds[0].0.status, "pending");
    assert_eq!(ds[0].0.attempts, 0);
    // Handed back, it is sent again by the next worker.
    rx.status("/stuck", 200);
    assert_eq!(drain(&t.app).await, 1);
    assert_eq!(rx.hits("/stuck").len(), 2);
}

async fn leased(t: &TestApp) -> i64 {
    jobboard_store::dispatch!(t.db().reader(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM webhook_deliveries WHERE lease_owner IS NOT NULL")
            .fetch_one(p)
            .await
            .unwrap()
    })
}

/// The real binary, killed with SIGKILL while deliveries are pending and in flight, then
/// started again: every event reaches the receiver at least once.
async fn sigkill_loses_no_event(b: Backend) {
    use std::process::{Command, Stdio};
    let (db_url, path) = fresh_database(b).await;
    let rx = Receiver::start().await;
    // The receiver is slow at first, so attempts are in flight when the server dies.
    rx.answer(
        "/durable",
        Behavior {
            delay: Duration::from_secs(30),
            ..Behavior::default()
        },
    );
    let bin = env!("CARGO_BIN_EXE_jobboard");
    let start = || {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let child = Command::new(bin)
            .env_remove("DATABASE_URL")
            .env_remove("JOBBOARD_CONFIG")
            .env("RUST_LOG", "warn")
            .env("JOBBOARD_WEBHOOK_TIMEOUT", "2")
            .env("JOBBOARD_WEBHOOK_RETRY_SCHEDULE", "1,1,1,1,1,1,1,1")
            .args([
                "--database",
                &db_url,
                "serve",
                "--allow-private-targets",
                "--listen",
            ])
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        (child, port)
    };
    let (mut child, port) = start();
    let key = {
        use std::io::{BufRead, BufReader};
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let _ = lines.next();
        lines.next().unwrap().unwrap()
    };
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut status = 0;
    for _ in 0..200 {
        match client
            .post(format!("http://127.0.0.1:{port}/api/webhooks"))
            .header("x-api-key", &key)
            .json(
                &json!({"event": "*", "target_type": "webhook", "target_url": rx.url("/durable")}),
            )
            .send()
            .await
        {
            Ok(r) => {
                status = r.status().as_u16();
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(25)).await,
        }
    }
    assert_eq!(status, 201);
    // Events written by another process into the same database (organization 1).
    let db = jobboard_store::Db::connect(&db_url, 2).await.unwrap();
    let emit_n = |range: std::ops::Range<i64>| {
        let db = db.clone();
        async move {
            for i in range {
                let mut tx = db.begin().await.unwrap();
                events::emit(&mut tx, OrgId(1), "job.created", json!({"n": i}))
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
            }
        }
    };
    emit_n(0..20).await;
    assert!(
        rx.wait_until(Duration::from_secs(15), |h| !h.is_empty())
            .await,
        "attempts in flight"
    );
    Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    let _ = child.wait();
    // More events while the server is down; the receiver recovers.
    emit_n(20..30).await;
    rx.status("/durable", 200);
    let (mut child, _) = start();
    let seen = |hits: &[crate::webhook_receiver::Hit]| {
        let mut n: Vec<i64> = hits
            .iter()
            .filter(|h| h.path == "/durable")
            .filter_map(|h| serde_json::from_slice::<Value>(&h.body).ok())
            .filter_map(|v| v["data"]["n"].as_i64())
            .collect();
        n.sort();
        n.dedup();
        n.len()
    };
    let all = rx
        .wait_until(Duration::from_secs(60), |h| seen(h) == 30)
        .await;
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let exit = child.wait().unwrap();
    assert!(all, "only {} of 30 events arrived", seen(&rx.all()));
    assert!(exit.success(), "{exit:?}");
    db.close().await;
    if let Some(p) = path {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", p.display()));
        }
    }
}

async fn a_burst_of_attempts_is_recorded_once_each(b: Backend) {
    // Succeeded attempts are recorded in batches, failed ones one by one: a burst mixes
    // both, and every delivery's log must still show exactly its own attempt.
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.answer(
        "/bad",
        Behavior {
            status: 500,
            ..Behavior::default()
        },
    );
    let ok1 = subscribe(&t, "*", "webhook", &rx.url("/ok1"), None).await;
    let ok2 = subscribe(&t, "*", "webhook", &rx.url("/ok2"), None).await;
    let bad = subscribe(&t, "*", "webhook", &rx.url("/bad"), None).await;
    for _ in 0..60 {
        emit(&t, "job.created", samples()[0].1.clone()).await;
    }
    assert_eq!(drain(&t.app).await, 180);
    assert_eq!(drain(&t.app).await, 0, "nothing is due again at once");
    for path in ["/ok1", "/ok2", "/bad"] {
        assert_eq!(rx.hits(path).len(), 60, "{path}");
    }
    for (sub, status, code) in [
        (&ok1, "succeeded", 200),
        (&ok2, "succeeded", 200),
        (&bad, "pending", 500),
    ] {
        let r = t
            .get(&format!("/webhooks/{sub}/deliveries?limit=100"))
            .await;
        r.expect(200);
        let list = r.body["data"].as_array().unwrap();
        assert_eq!(list.len(), 60);
        for d in list {
            assert_eq!(d["status"], status, "{d}");
            assert_eq!(d["attempts"], 1, "{d}");
            let log = d["attempt_log"].as_array().unwrap();
            assert_eq!(log.len(), 1, "{d}");
            assert_eq!(log[0]["attempt"], 1);
            assert_eq!(log[0]["status_code"], code);
        }
    }
}
